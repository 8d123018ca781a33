"""A small, strict RFC 6902 applier, independent of the implementation under test.

Strict on purpose: a patch that only works with a lenient applier (adding under a missing
parent, removing a missing member, an out-of-range index) is a bug the API server would
reject.
"""
import copy
import json


class PatchError(Exception):
    pass


def _tokens(pointer):
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"pointer {pointer!r} does not start with '/'")
    out = []
    for raw in pointer[1:].split("/"):
        if "~" in raw.replace("~0", "").replace("~1", ""):
            raise PatchError(f"bad escape in {pointer!r}")
        out.append(raw.replace("~1", "/").replace("~0", "~"))
    return out


def _index(container, token, for_add):
    if token == "-" and for_add:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(f"bad array index {token!r}")
    i = int(token)
    limit = len(container) if for_add else len(container) - 1
    if i > limit:
        raise PatchError(f"array index {i} out of range (size {len(container)})")
    return i


def _walk(doc, tokens, pointer):
    node = doc
    for t in tokens:
        if isinstance(node, dict):
            if t not in node:
                raise PatchError(f"missing member {t!r} in {pointer!r}")
            node = node[t]
        elif isinstance(node, list):
            node = node[_index(node, t, False)]
        else:
            raise PatchError(f"cannot descend into a scalar at {t!r} in {pointer!r}")
    return node


def _parent(doc, pointer):
    tokens = _tokens(pointer)
    if not tokens:
        raise PatchError("operation on the root is not expected here")
    return _walk(doc, tokens[:-1], pointer), tokens[-1]


def _get(doc, pointer):
    return _walk(doc, _tokens(pointer), pointer)


def _add(doc, pointer, value):
    if pointer == "":
        return value
    parent, last = _parent(doc, pointer)
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, True), value)
    else:
        raise PatchError(f"add under a scalar at {pointer!r}")
    return doc


def _remove(doc, pointer):
    parent, last = _parent(doc, pointer)
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"remove of missing member {pointer!r}")
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, False))
    raise PatchError(f"remove under a scalar at {pointer!r}")


def apply_patch(doc, patch):
    """Returns a new document; raises PatchError on any deviation from RFC 6902."""
    if not isinstance(patch, list):
        raise PatchError("a patch is a JSON array")
    # Through JSON rather than deepcopy: YAML aliases load as shared objects, and deepcopy
    # would keep them shared, so a change at one place would show at another.
    doc = json.loads(json.dumps(doc))
    for op in patch:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"malformed operation {op!r}")
        kind, path = op["op"], op["path"]
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            if path == "":
                doc = copy.deepcopy(op["value"])
                continue
            _get(doc, path)  # must exist
            parent, last = _parent(doc, path)
            if isinstance(parent, dict):
                parent[last] = copy.deepcopy(op["value"])
            else:
                parent[_index(parent, last, False)] = copy.deepcopy(op["value"])
        elif kind == "move":
            value = _remove(doc, op["from"])
            doc = _add(doc, path, value)
        elif kind == "copy":
            doc = _add(doc, path, copy.deepcopy(_get(doc, op["from"])))
        elif kind == "test":
            if _get(doc, path) != op["value"]:
                raise PatchError(f"test failed at {path!r}")
        else:
            raise PatchError(f"unknown op {kind!r}")
    return doc
