"""psgrad's optimizers step as Thinc 8.1.7's do: Adam.v1, RAdam.v1 and SGD.v1 with their settings, a list
learn_rate and the constant_then.v1 schedule.

Thinc resolves each [optimizer] config with its own registry and steps two parameter arrays over random
gradients (large enough that clipping acts); tests/thinc_optimizer_dump.cpp steps psgrad's optimizer from
the same config over the same gradients. The weights must agree to 1e-5 relative (in norm) after every
count of steps checked. Where python3-thinc is not installed, says so and exits 77 (skipped); under CI=true
that fails instead.

Usage: python3 thinc_optimizers_test.py THINC_OPTIMIZER_DUMP
"""
import subprocess
import sys
import tempfile
from pathlib import Path

from thinc_checks import skip

TOLERANCE = 1e-5
ARRAYS, WIDTH = 2, 7
CASES = {
    "Adam.v1": '[optimizer]\n@optimizers = "Adam.v1"\nlearn_rate = 0.01\nuse_averages = false\n',
    "Adam.v1 with L2": '[optimizer]\n@optimizers = "Adam.v1"\nlearn_rate = 0.01\nL2 = 0.01\nuse_averages = false\n',
    "RAdam.v1": '[optimizer]\n@optimizers = "RAdam.v1"\nlearn_rate = 0.01\nuse_averages = false\n',
    "RAdam.v1 averages": '[optimizer]\n@optimizers = "RAdam.v1"\nlearn_rate = 0.01\nuse_averages = true\n',
    "Adam.v1 averages": '[optimizer]\n@optimizers = "Adam.v1"\nlearn_rate = 0.01\nuse_averages = true\n',
    "RAdam.v1 coupled L2": '[optimizer]\n@optimizers = "RAdam.v1"\nlearn_rate = 0.02\nL2 = 0.05\n'
                           'L2_is_weight_decay = false\nbeta2 = 0.99\nuse_averages = false\n',
    "SGD.v1": '[optimizer]\n@optimizers = "SGD.v1"\nlearn_rate = 0.1\nuse_averages = false\n',
    "Adam.v1, a list learn_rate": '[optimizer]\n@optimizers = "Adam.v1"\nlearn_rate = [0.01, 0.03, 0.002]\n'
                                  'use_averages = false\n',
    "RAdam.v1, constant_then.v1": '[optimizer]\n@optimizers = "RAdam.v1"\nuse_averages = false\n'
                                  '[optimizer.learn_rate]\n@schedules = "constant_then.v1"\nrate = 0.02\nsteps = 3\n'
                                  '[optimizer.learn_rate.schedule]\n@schedules = "decaying.v1"\nbase_rate = 0.01\n'
                                  'decay = 0.1\n',
    "SGD.v1 decay": '[optimizer]\n@optimizers = "SGD.v1"\nlearn_rate = 0.1\nL2 = 0.1\ngrad_clip = 0.5\n'
                    'use_averages = true\n',
}
STEPS = [1, 4, 5, 6, 7, 12, 40]



def thinc_weights(text, weights, gradients):
    from thinc.api import Config, registry

    optimizer = registry.resolve(Config().from_str(text))["optimizer"]
    arrays = [array.copy() for array in weights.reshape(ARRAYS, WIDTH)]
    for step in gradients:
        for index, gradient in enumerate(step.reshape(ARRAYS, WIDTH)):
            arrays[index], _ = optimizer((index, "W"), arrays[index], gradient.copy())
        optimizer.step_schedules()
    numpy = __import__("numpy")
    averages = None
    if optimizer.averages is not None and optimizer.averages:
        averages = numpy.concatenate([optimizer.averages[(index, "W")] for index in range(ARRAYS)])
    return numpy.concatenate(arrays), averages


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    try:
        import numpy
        import thinc  # noqa: F401
    except ImportError as error:
        skip(f"python3-thinc is not installed ({error}); scripts/setup.sh --test installs it")
    problems = []
    rng = numpy.random.default_rng(11)
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        for name, text in CASES.items():
            (folder / "optimizer.cfg").write_text(text)
            weights = rng.normal(0.0, 1.0, ARRAYS * WIDTH).astype("float32")
            for steps in STEPS:
                gradients = rng.normal(0.0, 0.6, (steps, ARRAYS * WIDTH)).astype("float32")
                numpy.save(folder / "weights.npy", weights)
                numpy.save(folder / "gradients.npy", gradients)
                done = subprocess.run([sys.argv[1], str(folder / "optimizer.cfg"), str(ARRAYS), str(folder)],
                                      capture_output=True, text=True)
                if done.returncode != 0:
                    problems.append(f"{name}: psgrad refused it: {done.stderr.strip()}")
                    break
                ours = numpy.load(folder / "stepped.npy").astype("float64")
                theirs, their_averages = thinc_weights(text, weights, gradients)
                theirs = theirs.astype("float64")
                averages_file = folder / "averages.npy"
                if (their_averages is None) != (not averages_file.exists()):
                    problems.append(f"{name}: only {'Thinc' if their_averages is not None else 'psgrad'} keeps averages")
                elif their_averages is not None:
                    ours_averaged = numpy.load(averages_file).astype("float64")
                    gap = float(numpy.linalg.norm(ours_averaged - their_averages) / numpy.linalg.norm(their_averages))
                    if not gap <= TOLERANCE:
                        problems.append(f"{name}: after {steps} steps the averages differ by {gap:.2e}")
                    averages_file.unlink()
                error = float(numpy.linalg.norm(ours - theirs) / numpy.linalg.norm(theirs - weights))
                if not error <= TOLERANCE:
                    problems.append(f"{name}: after {steps} steps the weights differ by {error:.2e} of the change")
            print(f"{'ok ' if not any(p.startswith(name + ':') for p in problems) else 'BAD'} {name}: {len(STEPS)} runs")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
