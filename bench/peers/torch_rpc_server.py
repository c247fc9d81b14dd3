"""The parameter server and the trainer side of the torch.distributed.rpc peer (torch_rpc_ps.py), written
as PyTorch's batch-updating parameter-server tutorial writes it ("Implementing Batch RPC Processing Using
Asynchronous Executions"): trainers compute gradients on their own copy of the model and call
`update_and_fetch_model` on the server's RRef, which answers with the new weights.

- sync: the tutorial's server. Each call adds its gradients and gets a future; once every trainer's
  gradients are in, the server averages them, steps the optimizer and completes the future for all
  (`@rpc.functions.async_execution`, so that a waiting call holds no RPC thread).
- async: the same server stepping on every call as it arrives, under its lock.

One change from the tutorial: the answer is the parameter tensors (copied under the lock), not the
pickled nn.Module, which is less to send and to unpickle.
"""
import threading

import torch
import torch.distributed.rpc as rpc
import torch.nn.functional as F

import peer_common as common


class ParameterServer:
    def __init__(self, mode, trainers, batch_size, evaluation=None):
        self.mode, self.trainers, self.batch_size = mode, trainers, batch_size
        torch.manual_seed(0)
        self.model = common.build_model(torch)
        self.parameters = list(self.model.parameters())
        for p in self.parameters:
            p.grad = torch.zeros_like(p)
        self.optimizer = common.thinc_adam(torch, self.parameters)
        self.lock = threading.Lock()
        self.future = torch.futures.Future()
        self.pending = 0
        self.steps = 0
        self.gradients = 0
        # Accuracy runs: dict(x, y, target, every, max_seconds); the clock starts with start_clock().
        self.evaluation = evaluation
        self.clock = None
        self.stop = False
        self.accuracy = 0.0
        self.reached = None  # (training seconds, samples) at the first evaluation at or above the target

    def weights(self):
        return [p.detach().clone() for p in self.parameters]

    def start_clock(self):
        self.clock = common.TrainingClock()

    def step(self):
        """One optimizer step on the gradients in p.grad, then the evaluation when one is due."""
        common.clip_each_gradient(torch, self.parameters)
        self.optimizer.step()
        for p in self.parameters:
            p.grad.zero_()
        self.steps += 1
        if self.evaluation and self.clock and self.steps % self.evaluation["every"] == 0:
            seconds = self.clock.seconds()
            with self.clock.pause():
                self.accuracy = common.dev_accuracy(torch, self.model, self.evaluation["x"], self.evaluation["y"])
            if self.accuracy >= self.evaluation["target"] and self.reached is None:
                self.reached = (seconds, self.gradients * self.batch_size)
            self.stop = self.reached is not None or seconds > self.evaluation["max_seconds"]

    @staticmethod
    @rpc.functions.async_execution
    def update_and_fetch_model(ps_rref, gradients):
        self = ps_rref.local_value()
        with self.lock:
            self.gradients += 1
            if self.mode == "async":
                for p, g in zip(self.parameters, gradients):
                    p.grad.copy_(g)
                self.step()
                done = torch.futures.Future()
                done.set_result((self.weights(), self.stop))
                return done
            for p, g in zip(self.parameters, gradients):
                p.grad += g
            self.pending += 1
            future = self.future
            if self.pending >= self.trainers:
                for p in self.parameters:
                    p.grad /= self.trainers
                self.pending = 0
                self.step()
                future.set_result((self.weights(), self.stop))
                self.future = torch.futures.Future()
        return future

    @staticmethod
    def current_weights(ps_rref):
        self = ps_rref.local_value()
        with self.lock:
            return self.weights()

    @staticmethod
    def results(ps_rref):
        self = ps_rref.local_value()
        return {"steps": self.steps, "gradients": self.gradients, "final_accuracy": self.accuracy,
                "reached": self.reached is not None,
                "seconds_to_target": self.reached[0] if self.reached else None,
                "samples_to_target": self.reached[1] if self.reached else None,
                "training_seconds": self.clock.seconds() if self.clock else None}


# -- the trainer's side: runs in each trainer process, called by the server's driver over RPC ----------

_trainer = {}


def prepare_trainer(data_folder, batch_size, seed):
    """Loads the training data and builds the local model once, before any timing."""
    x, y = common.load_tensors(torch, data_folder)
    model = common.build_model(torch)
    model.train()
    _trainer.update(model=model, parameters=list(model.parameters()),
                    stream=common.minibatches(torch, x, y, batch_size, seed))
    return True


def train(ps_rref, steps):
    """`steps` gradients sent to the server (0: until the server says stop); returns how many were sent."""
    model, parameters, stream = _trainer["model"], _trainer["parameters"], _trainer["stream"]
    load(parameters, rpc.rpc_sync(ps_rref.owner(), ParameterServer.current_weights, args=(ps_rref,)))
    sent = 0
    while steps == 0 or sent < steps:
        x, y = next(stream)
        for p in parameters:
            p.grad = None
        F.cross_entropy(model(x), y).backward()
        weights, stop = rpc.rpc_sync(ps_rref.owner(), ParameterServer.update_and_fetch_model,
                                     args=(ps_rref, [p.grad for p in parameters]))
        load(parameters, weights)
        sent += 1
        if stop:
            break
    return sent


def load(parameters, weights):
    with torch.no_grad():
        for p, w in zip(parameters, weights):
            p.copy_(w)
