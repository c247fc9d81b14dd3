"""Models with a table front compute what Thinc 8.1.7 computes: prediction, dense gradients, table gradient
(HashEmbed, Embed and SparseLinear tables).

For each case, Thinc resolves a [model] config (list2ragged, with_array(HashEmbed), the ids' own layers,
a reduce, dense layers) with its own registry, initializes it on lists of integer ids, draws every
parameter (the HashEmbed table too) at random, predicts, and backprops the cross-entropy gradient
(probabilities - targets) / n. tests/thinc_tables_dump.cpp builds the same config with psgrad, takes the
same table, dense parameters (in Thinc's model.walk() order), ids and targets, and runs psgrad's
prediction and training step. Each array must match Thinc's to 1e-5 relative (in norm). Where
python3-thinc is not installed, says so and exits 77 (skipped); under CI=true that fails instead.

Usage: python3 thinc_tables_test.py THINC_TABLES_DUMP
"""
import subprocess
import sys

from thinc_checks import case_seed, compared, require_thinc, run_cases

TOLERANCE = 1e-5
CLASSES, EXAMPLES, ROWS, WIDTH = 3, 7, 50, 6


def layer(path, name, **arguments):
    return f"[{path}]\n@layers = \"{name}\"\n" + "".join(f"{key} = {value}\n" for key, value in arguments.items())


def model(*middle, reduce="reduce_mean.v1", dense=(), table=("HashEmbed.v1", {"seed": 5})):
    """list2ragged >> with_array(HashEmbed) >> middle... >> reduce >> dense... >> Softmax."""
    text = layer("model", "chain.v1") + layer("model.*.a_ragged", "list2ragged.v1")
    text += layer("model.*.b_embed", "with_array.v1") + layer("model.*.b_embed.layer", table[0], nO=WIDTH, nV=ROWS,
                                                             **table[1])
    for index, part in enumerate(middle):
        text += part(f"model.*.c{index}")
    text += layer("model.*.d_pool", reduce)
    for index, part in enumerate(dense):
        text += part(f"model.*.e{index}")
    return text + layer("model.*.f_out", "Softmax.v1")


def with_array(inner):
    return lambda path: layer(path, "with_array.v1") + inner(path + ".layer")


def plain(name, **arguments):
    return lambda path: layer(path, name, **arguments)


def chained(*parts):
    return lambda path: layer(path, "chain.v1") + "".join(part(f"{path}.*.p{i}") for i, part in enumerate(parts))


CASES = {
    "reduce_mean": model(),
    "reduce_sum then Relu": model(reduce="reduce_sum.v1", dense=[plain("Relu.v1", nO=8)]),
    "Maxout per id, reduce_max": model(with_array(plain("Maxout.v1", nO=5, nP=2, normalize="true")), reduce="reduce_max.v1"),
    "windows within each example": model(plain("expand_window.v1", window_size=1),
                                         with_array(plain("Maxout.v1", nO=5, nP=3))),
    "windows across the array, reduce_first": model(with_array(chained(plain("expand_window.v1", window_size=2),
                                                                       plain("Mish.v1", nO=4))), reduce="reduce_first.v1"),
    "Relu per id, reduce_last": model(with_array(plain("Relu.v1", nO=4)), reduce="reduce_last.v1"),
    "Embed.v1, reduce_sum": model(reduce="reduce_sum.v1", table=("Embed.v1", {})),
    "SparseLinear.v2 then softmax_activation": layer("model", "chain.v1") +
        layer("model.*.linear", "SparseLinear.v2", nO=CLASSES, length=ROWS) + layer("model.*.out", "softmax_activation.v1"),
    "SparseLinear.v1 then softmax_activation": layer("model", "chain.v1") +
        layer("model.*.linear", "SparseLinear.v1", nO=CLASSES, length=ROWS) + layer("model.*.out", "softmax_activation.v1"),
}
TABLE_NODES = ("hashembed", "embed", "sparse_linear")




def run_case(name, text, dump, folder):
    import numpy
    from thinc.api import Config, registry

    rng = numpy.random.default_rng(case_seed(name))
    lengths = rng.integers(1, 6, EXAMPLES)
    largest = ROWS if "Embed.v1" in text else 10**12  # Embed indexes its table by the id
    ids = [rng.integers(0, largest, length).astype("uint64") for length in lengths]
    targets = numpy.eye(CLASSES, dtype="float32")[rng.integers(0, CLASSES, EXAMPLES)]
    sparse_linear = "SparseLinear" in text
    # SparseLinear.v1 reads its flat W at hash & (length - 1) + class: psgrad's row k (width 1) is W[k], for
    # the length + nO - 1 places that indexing reaches.
    v1_rows = ROWS + CLASSES - 1 if "SparseLinear.v1" in text else None
    # SparseLinear takes (keys, values, lengths); the ids of an ids column weigh 1 each.
    inputs = ((numpy.concatenate(ids), numpy.ones(int(lengths.sum()), "float32"), lengths.astype("int32"))
              if sparse_linear else ids)
    thinc_model = registry.resolve(Config().from_str(text))["model"]
    thinc_model.initialize(X=inputs, Y=targets)
    table, dense, params = None, [], []
    for node in thinc_model.walk(order="dfs_pre"):
        for param in node.param_names:
            if node.has_param(param):
                value = rng.normal(0.0, 0.5, node.get_param(param).shape).astype("float32")
                node.set_param(param, value)
                params.append((node, param))
                if node.name in TABLE_NODES and param != "b":
                    # SparseLinear.v2's W holds class c's weights of row r at c * length + r: psgrad's row r.
                    if v1_rows:
                        table = value[:v1_rows].reshape(-1, 1).copy()
                    else:
                        table = value.reshape(-1, ROWS).T.copy() if sparse_linear else value
                else:
                    dense.append(value.ravel())
    probabilities, backprop = thinc_model.begin_update(inputs)
    backprop((probabilities - targets) / EXAMPLES)
    numpy.save(folder / "ids.npy", numpy.concatenate(ids).astype("int64"))
    numpy.save(folder / "lengths.npy", lengths.astype("int64"))
    numpy.save(folder / "table.npy", table)
    numpy.save(folder / "dense.npy", numpy.concatenate(dense))
    numpy.save(folder / "targets.npy", targets)
    (folder / "model.cfg").write_text(text)
    done = subprocess.run([dump, str(folder / "model.cfg"), str(CLASSES), str(folder)], capture_output=True, text=True)
    if done.returncode != 0:
        return [f"{name}: psgrad refused it: {done.stderr.strip()}"]
    checks = [("prediction", numpy.load(folder / "probs.npy"), probabilities)]
    ours_dense = numpy.load(folder / "dense_grads.npy")
    start = 0
    for node, param in params:
        theirs = node.get_grad(param)
        if node.name in TABLE_NODES and param != "b":
            ours_table = numpy.load(folder / "table_grad.npy")
            if v1_rows:
                ours_table = numpy.concatenate([ours_table.ravel(), numpy.zeros(theirs.size - v1_rows, "float32")])
            checks.append(("table gradient", ours_table.T.ravel() if sparse_linear else ours_table, theirs))
            continue
        checks.append((f"{node.name}.{param} gradient", ours_dense[start:start + theirs.size].reshape(theirs.shape), theirs))
        start += theirs.size
    return compared(name, checks, TOLERANCE)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    require_thinc()
    return run_cases(CASES, run_case, sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
