"""The sparse PyTorch peers of psgrad_bench (bench/peers/sparse_common.py) pool what Thinc's HashEmbed.v1
with reduce_sum.v1 or reduce_mean.v1 pools, on the same ids, seed and table: one EmbeddingBag over an
example's four keys an id, with each key weighted 1 / (the bag's ids) for a mean. psgrad's keys are
Thinc's (tests/test_thinc_hashembed.cpp), so the peers train psgrad's model. Also: the peer's row-wise
lazy Adam steps a row as psgrad's lazy Adam does, with the row's own step count.
Usage: sparse_peer_agreement_test.py SOURCE_DIR (exits 77 without torch, numpy or thinc)
"""
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "bench", "peers"))
try:
    import peer_common  # noqa: F401  (before numpy: it sets OPENBLAS_NUM_THREADS)
    import sparse_common as sparse
    import numpy
    import torch
    from thinc.api import HashEmbed, Ragged, reduce_mean, reduce_sum
except ImportError as error:
    print(f"SKIP: {error}")
    sys.exit(77)


def thinc_pooled(ids, lengths, table, seed, pool):
    embed = HashEmbed(table.shape[1], table.shape[0], seed=seed)
    embed.initialize()
    embed.set_param("E", table.copy())
    vectors, _ = embed(ids, is_train=False)
    pooled, _ = pool(Ragged(vectors, lengths), is_train=False)
    return pooled, embed.ops.hash(ids, seed) % table.shape[0]


def main():
    rng = numpy.random.default_rng(7)
    rows, width, seed = 97, 5, 11  # few rows: ids share rows, and an id's four keys may repeat
    lengths = numpy.array([3, 0, 1, 4, 2], dtype="int32")
    ids = rng.integers(0, 2**63, int(lengths.sum()), dtype=numpy.uint64)
    table = rng.uniform(-0.1, 0.1, (rows, width)).astype(numpy.float32)
    failures = []
    for pooling, pool in (("sum", reduce_sum()), ("mean", reduce_mean())):
        expected, keys = thinc_pooled(ids, lengths, table, seed, pool)
        flat_keys = keys.astype(numpy.int64).ravel()  # four keys an id, in Thinc's order, as psgrad_bench writes them
        offsets = numpy.concatenate([[0], numpy.cumsum(4 * lengths)]).astype(numpy.int64)
        model = sparse.build_model(torch, {"fields": [{"rows": rows, "width": width}], "hidden_width": 3,
                                           "dropout": 0.0, "classes": 2})
        with torch.no_grad():
            model.bags[0].weight.copy_(torch.from_numpy(table))
            bag_keys, starts, weights = sparse.gather_bags(torch, flat_keys, offsets,
                                                           numpy.arange(len(lengths)), pooling == "mean")
            pooled = model.bags[0](bag_keys, starts, per_sample_weights=weights).numpy()
        error = numpy.abs(pooled - expected).max()
        print(f"{pooling}: largest difference from Thinc {error:.2e}")
        if error > 1e-6:
            failures.append(f"{pooling} pooling differs from Thinc's by {error}")

    # Two steps of a row and one of another: each row's bias correction follows its own step count.
    weight = torch.nn.Parameter(torch.zeros(4, 2))
    adam = sparse.RowwiseLazyAdam(torch, [weight], lr=0.1)
    for rows_touched in ([0], [0, 2]):
        weight.grad = torch.sparse_coo_tensor([rows_touched], torch.ones(len(rows_touched), 2), (4, 2))
        adam.step()
    # A row's first step with a constant gradient moves it by the learning rate (m / sqrt(v) = 1 after
    # the bias correction); its second by the same again.
    expected_rows = {0: -0.2, 1: 0.0, 2: -0.1, 3: 0.0}
    for row, value in expected_rows.items():
        if abs(weight[row, 0].item() - value) > 1e-5:
            failures.append(f"lazy Adam: row {row} is {weight[row, 0].item()}, expected {value}")
    if failures:
        print("\n".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
