# Lab 08, exercise 1, answered with a delete that fails on a key already deleted: applying
# a delete twice is not idempotent.


def apply_op(data, request):
    if request["op"] == "set":
        data[request["key"]] = request["value"]
    elif request["op"] == "delete":
        del data[request["key"]]
