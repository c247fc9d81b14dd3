"""Thinc's HashEmbed.v1, reduce_sum.v1 and reduce_mean.v1 on the ids, table and pooled-row gradients
psgrad's test writes to stdin (JSON); prints the keys, the outputs and the table gradients as JSON.
Usage: thinc_hashembed.py < input.json > output.json
"""
import json
import sys

import numpy
from thinc.api import HashEmbed, Ragged, reduce_mean, reduce_sum


def table_model(spec, table):
    model = HashEmbed(spec["width"], spec["rows"], seed=spec["seed"])
    model.initialize()
    model.set_param("E", table.copy())
    return model


def main():
    spec = json.load(sys.stdin)
    width, rows = spec["width"], spec["rows"]
    ids = numpy.array(spec["ids"], dtype="uint64")
    lengths = numpy.array(spec["lengths"], dtype="int32")
    table = numpy.array(spec["table"], dtype="float32").reshape(rows, width)
    d_pooled = numpy.array(spec["d_pooled"], dtype="float32").reshape(len(lengths), width)

    embed = table_model(spec, table)
    keys = embed.ops.hash(ids, spec["seed"]) % rows  # the keys HashEmbed's forward selects
    result = {"keys": keys.ravel().tolist()}
    vectors, _ = embed(ids, is_train=False)
    result["vectors"] = vectors.ravel().tolist()
    for name, pool in (("sum", reduce_sum()), ("mean", reduce_mean())):
        model = table_model(spec, table)
        vectors, backprop_embed = model(ids, is_train=True)
        pooled, backprop_pool = pool(Ragged(vectors, lengths), is_train=True)
        backprop_embed(backprop_pool(d_pooled.copy()).data)
        result[name] = pooled.ravel().tolist()
        result[name + "_gradient"] = model.get_grad("E").ravel().tolist()
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
