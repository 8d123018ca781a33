#!/usr/bin/env python3
"""Checks what scripts/image.sh built against the OCI image spec and the Dockerfile.

    check_image.py OUT_DIR DOCKERFILE VERSION REVISION

OUT_DIR holds oci/ (an OCI image layout) and rdma-webhook.tar (a docker-archive). Prints one
`ok ...` or `FAIL ...` line per check (tests/image/run.sh counts them); standard library only.
"""
import gzip
import hashlib
import io
import json
import os
import re
import shlex
import sys
import tarfile

OUT, DOCKERFILE, VERSION, REVISION = sys.argv[1:5]
LAYOUT = os.path.join(OUT, "oci")
ARCHIVE = os.path.join(OUT, "rdma-webhook.tar")
NAME = "rdma-webhook"


def ok(msg):
    print(f"ok   {msg}")


def bad(msg):
    print(f"FAIL {msg}")


def check(cond, msg, detail=""):
    if cond:
        ok(msg)
    else:
        bad(f"{msg}{': ' + str(detail) if detail else ''}")
    return cond


def dockerfile_runtime(path, args):
    """USER, EXPOSE, ENTRYPOINT, CMD and LABEL of the last stage, with ARG values substituted."""
    lines, cur = [], ""
    for raw in open(path).read().splitlines():
        s = raw.strip()
        if s.startswith("#") and not cur:
            continue
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        cur += s
        if cur.strip():
            lines.append(cur.strip())
        cur = ""
    stage_start = max(i for i, line in enumerate(lines) if line.upper().startswith("FROM "))
    out = {"User": None, "ExposedPorts": {}, "Entrypoint": None, "Cmd": None, "Labels": {}}
    values = {}

    def subst(s):
        return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: values.get(m.group(1) or m.group(2), ""), s)

    for line in lines[stage_start + 1:]:
        word, _, rest = line.partition(" ")
        word, rest = word.upper(), rest.strip()
        if word == "ARG":
            name, _, default = rest.partition("=")
            values[name] = args.get(name, default)
        elif word == "USER":
            out["User"] = subst(rest)
        elif word == "EXPOSE":
            for p in rest.split():
                out["ExposedPorts"][p if "/" in p else p + "/tcp"] = {}
        elif word in ("ENTRYPOINT", "CMD"):
            out[word.capitalize()] = json.loads(rest)  # exec form only: there is no shell
        elif word == "LABEL":
            for kv in shlex.split(rest):
                k, _, v = kv.partition("=")
                out["Labels"][k] = subst(v)
    return out


def blob(digest):
    algo, hexd = digest.split(":", 1)
    data = open(os.path.join(LAYOUT, "blobs", algo, hexd), "rb").read()
    if hashlib.sha256(data).hexdigest() != hexd:
        raise ValueError(f"blob {digest} does not match its digest")
    return data


# ------------------------------------------------------------------------- OCI layout
layout = json.load(open(os.path.join(LAYOUT, "oci-layout")))
check(layout.get("imageLayoutVersion") == "1.0.0", "oci-layout is version 1.0.0", layout)
index = json.load(open(os.path.join(LAYOUT, "index.json")))
descs = index.get("manifests", [])
check(len(descs) == 1, "index.json holds one manifest", len(descs))
tag = descs[0].get("annotations", {}).get("org.opencontainers.image.ref.name")
check(tag == VERSION, f"the manifest is tagged with the version ({VERSION})", tag)
manifest_bytes = blob(descs[0]["digest"])
manifest = json.loads(manifest_bytes)
check(manifest.get("mediaType", descs[0]["mediaType"]) == "application/vnd.oci.image.manifest.v1+json"
      and manifest["config"]["mediaType"] == "application/vnd.oci.image.config.v1+json",
      "OCI manifest and config media types")
config = json.loads(blob(manifest["config"]["digest"]))
ok("the manifest and config blobs match their sha256 digests")
layers = manifest["layers"]
check(len(layers) == 1 and layers[0]["mediaType"] == "application/vnd.oci.image.layer.v1.tar+gzip",
      "one gzip layer", [layer["mediaType"] for layer in layers])
layer_gz = blob(layers[0]["digest"])
check(len(layer_gz) == layers[0]["size"], "the layer's size matches its descriptor")
layer_tar = gzip.decompress(layer_gz)
diff_id = "sha256:" + hashlib.sha256(layer_tar).hexdigest()
check(config["rootfs"] == {"type": "layers", "diff_ids": [diff_id]},
      "config rootfs.diff_ids is the uncompressed layer's digest", config["rootfs"])

# The layer, read strictly (a tar without its end-of-archive blocks fails here, as in GNU tar).
try:
    members = tarfile.open(fileobj=io.BytesIO(layer_tar), mode="r:").getmembers()
    ok("the layer is a complete tar archive")
except tarfile.TarError as e:
    members = []
    bad(f"the layer is not a valid tar archive: {e}")
files = [m for m in members if m.name.strip("./") != ""]
dirs_root = [m for m in members if m.name.strip("./") == ""]
check([(m.name.lstrip("./"), m.isfile()) for m in files] == [(NAME, True)],
      "no shell, nothing else: the layer holds exactly one file, /rdma-webhook",
      [m.name for m in members])
if files:
    m = files[0]
    check((m.mode & 0o7777, m.uid, m.gid) == (0o755, 0, 0),
          "/rdma-webhook is 0755 root:root (as Dockerfile COPY)", (oct(m.mode), m.uid, m.gid))
created = config.get("created", "")
mtimes = {m.mtime for m in members}
check(bool(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", created))
      and all(h.get("created") == created for h in config.get("history", [])),
      f"config and history carry one fixed timestamp ({created})", config.get("history"))
check(len(mtimes) == 1, "every layer entry has the same fixed mtime", mtimes)

# ------------------------------------------------------------------- config vs Dockerfile
cfg = config.get("config", {})
want = dockerfile_runtime(DOCKERFILE, {"VERSION": VERSION, "REVISION": REVISION})
check(config.get("os") == "linux", "os linux", config.get("os"))
check(cfg.get("User") == "65532:65532", "user 65532:65532", cfg.get("User"))
check(cfg.get("Entrypoint") == ["/rdma-webhook"], 'entrypoint ["/rdma-webhook"]', cfg.get("Entrypoint"))
for key in ("User", "ExposedPorts", "Entrypoint", "Cmd"):
    check(cfg.get(key) == want[key], f"{key} is the Dockerfile's: {json.dumps(want[key])}", cfg.get(key))
check(cfg.get("Labels") == want["Labels"], "Labels are the Dockerfile's with VERSION and REVISION",
      {"built": cfg.get("Labels"), "Dockerfile": want["Labels"]})
check(sorted(cfg.get("ExposedPorts", {})) == ["8080/tcp", "8443/tcp"], "exposes 8443 and 8080")
check(cfg.get("Labels", {}).get("org.opencontainers.image.revision", "").startswith(REVISION.removesuffix("-dirty")),
      "the revision label names the source commit")
extra = sorted(set(cfg) - {"User", "ExposedPorts", "Entrypoint", "Cmd", "Labels", "Env"})
check(not extra and cfg.get("Env", []) == ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
      "nothing else in the config (Env is docker build's default PATH)", {"extra": extra, "Env": cfg.get("Env")})

# ---------------------------------------------------------------------- docker-archive
with tarfile.open(ARCHIVE, mode="r:") as t:
    names = t.getnames()
    dm = json.load(t.extractfile("manifest.json"))
    check(len(dm) == 1, "docker-archive manifest.json holds one image", len(dm))
    tags = dm[0].get("RepoTags", [])
    check(any(x in (f"{NAME}:{VERSION}", f"docker.io/library/{NAME}:{VERSION}") for x in tags),
          f"manifest.json names the tag {NAME}:{VERSION}", tags)
    dl = dm[0].get("Layers", [])
    check(len(dl) == 1 and dl[0] in names, "manifest.json names the one layer, present in the tarball", dl)
    if len(dl) == 1 and dl[0] in names:
        data = t.extractfile(t.getmember(dl[0]) if not t.getmember(dl[0]).issym()
                             else os.path.normpath(os.path.join(os.path.dirname(dl[0]), t.getmember(dl[0]).linkname))).read()
        check("sha256:" + hashlib.sha256(data).hexdigest() == diff_id,
              "the tarball's layer is the OCI layer, uncompressed (same diff_id)")
    dconf = json.load(t.extractfile(dm[0]["Config"]))
    dcfg = dconf.get("config", {})
    check(all(dcfg.get(k) == cfg.get(k) for k in ("User", "ExposedPorts", "Entrypoint", "Cmd", "Labels"))
          and dconf.get("rootfs", {}).get("diff_ids") == [diff_id],
          "the tarball's image config has the same user, ports, entrypoint, cmd, labels and layer")
