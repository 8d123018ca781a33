#!/usr/bin/env python3
"""Checks a release directory that scripts/release.sh wrote (tests/release/run.sh runs it).

    python3 tests/release/check_release.py DIR

Prints one line per problem and exits 1 when there is any; exits 0 silently otherwise.
"""
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile

import yaml

problems = []


def problem(msg):
    problems.append(msg)
    print("  " + msg)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_sums(d):
    lines = open(os.path.join(d, "SHA256SUMS")).read().splitlines()
    listed = {}
    for line in lines:
        digest, name = line.split(None, 1)
        listed[name.lstrip("*")] = digest
    files = sorted(f for f in os.listdir(d) if f != "SHA256SUMS")
    if sorted(listed) != files:
        problem(f"SHA256SUMS lists {sorted(listed)}, the directory holds {files}")
    for name, digest in listed.items():
        if os.path.exists(os.path.join(d, name)) and sha256(os.path.join(d, name)) != digest:
            problem(f"SHA256SUMS: {name} does not match")


def check_binary_archive(d, version):
    path = os.path.join(d, f"rdma-webhook_{version}_linux_amd64.tar.gz")
    with tarfile.open(path) as t:
        members = {m.name.lstrip("./"): m for m in t.getmembers() if m.isfile()}
        if sorted(members) != ["LICENSE", "README.md", "rdma-webhook"]:
            problem(f"{os.path.basename(path)} holds {sorted(members)}")
            return
        for m in t.getmembers():
            if (m.uid, m.gid) != (0, 0):
                problem(f"{m.name}: owner {m.uid}:{m.gid}, not 0:0")
        if members["rdma-webhook"].mode & 0o777 != 0o755:
            problem(f"rdma-webhook mode {oct(members['rdma-webhook'].mode)}")
        with tempfile.TemporaryDirectory() as tmp:
            exe = os.path.join(tmp, "kubectl-rdma")  # as krew installs it
            with open(exe, "wb") as f:
                f.write(t.extractfile(members["rdma-webhook"]).read())
            os.chmod(exe, 0o755)
            desc = subprocess.run(["file", "-b", exe], capture_output=True, text=True).stdout
            if "statically linked" not in desc and "static-pie linked" not in desc:
                problem(f"the archived binary is not static: {desc.strip()}")
            if "not stripped" in desc:
                problem("the archived binary is not stripped")
            r = subprocess.run([exe, "version"], capture_output=True, text=True)
            if r.returncode != 0 or not r.stdout.startswith(f"rdma-webhook {version}"):
                problem(f"archived binary `version`: {r.returncode} {r.stdout!r} {r.stderr!r}")
            head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                                  cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
            if f"commit: {head}" not in r.stdout.splitlines():
                problem(f"the archived binary says {r.stdout.splitlines()[1:2]}, the release is of commit {head}")
            r = subprocess.run([exe, "--help"], capture_output=True, text=True)
            if "kubectl rdma" not in r.stdout + r.stderr:
                problem("run as kubectl-rdma (as krew installs it) the binary does not call itself `kubectl rdma`")


def check_image(d, version):
    digest = open(os.path.join(d, f"rdma-webhook_{version}_image.digest")).read().strip()
    if not re.fullmatch(r"sha256:[0-9a-f]{64}", digest):
        problem(f"image digest file holds {digest!r}")
    with tarfile.open(os.path.join(d, f"rdma-webhook_{version}_image.oci.tar")) as t:
        index = json.load(t.extractfile("./index.json"))
        layout = json.load(t.extractfile("./oci-layout"))
        blob = t.extractfile("./blobs/" + digest.replace(":", "/")).read()
    if layout.get("imageLayoutVersion") != "1.0.0":
        problem(f"oci-layout: {layout}")
    m = index["manifests"]
    if len(m) != 1 or m[0]["digest"] != digest:
        problem(f"OCI index names {[x['digest'] for x in m]}, the digest file {digest}")
    elif m[0]["annotations"].get("org.opencontainers.image.ref.name") != version:
        problem(f"OCI tag {m[0]['annotations']}, want {version}")
    if "sha256:" + hashlib.sha256(blob).hexdigest() != digest:
        problem("the manifest blob does not hash to its digest")
    with tarfile.open(os.path.join(d, f"rdma-webhook_{version}_image.docker.tar")) as t:
        manifest = json.load(t.extractfile("manifest.json"))
    tags = manifest[0].get("RepoTags") or []
    # skopeo writes the name in its normalized form, with the default registry's prefix
    if len(tags) != 1 or not (tags[0] == f"rdma-webhook:{version}" or tags[0].endswith(f"/rdma-webhook:{version}")):
        problem(f"docker-archive RepoTags {tags}")
    return digest


def check_sbom(d, version, digest):
    doc = json.load(open(os.path.join(d, f"rdma-webhook_{version}_image.spdx.json")))
    for key in ("spdxVersion", "dataLicense", "SPDXID", "name", "documentNamespace", "creationInfo", "packages",
                "relationships"):
        if key not in doc:
            problem(f"SBOM lacks {key}")
    if doc.get("spdxVersion") != "SPDX-2.3" or doc.get("dataLicense") != "CC0-1.0":
        problem(f"SBOM header {doc.get('spdxVersion')} {doc.get('dataLicense')}")
    ids = [p["SPDXID"] for p in doc["packages"]] + [f["SPDXID"] for f in doc.get("files", [])] + ["SPDXRef-DOCUMENT"]
    if len(ids) != len(set(ids)):
        problem("SBOM SPDXIDs are not unique")
    for r in doc["relationships"]:
        for side in (r["spdxElementId"], r["relatedSpdxElement"]):
            if side not in ids:
                problem(f"SBOM relationship names unknown {side}")
    image = doc["packages"][0]
    if image["checksums"][0]["checksumValue"] != digest.split(":", 1)[1] or digest.replace(":", "%3A") not in \
            image["externalRefs"][0]["referenceLocator"]:
        problem("the SBOM describes another image digest")
    # the one file in the image is the stripped binary of the amd64 archive
    with tarfile.open(os.path.join(d, f"rdma-webhook_{version}_linux_amd64.tar.gz")) as t:
        bin_sha = hashlib.sha256(t.extractfile("./rdma-webhook").read()).hexdigest()
    files = {f["fileName"]: {c["algorithm"]: c["checksumValue"] for c in f["checksums"]} for f in doc["files"]}
    if list(files) != ["./rdma-webhook"] or files["./rdma-webhook"].get("SHA256") != bin_sha:
        problem(f"SBOM files {files}, the archived binary {bin_sha}")
    debs = {p["name"]: p for p in doc["packages"] if p["SPDXID"].startswith("SPDXRef-Package-deb-")}
    # what the build links and includes (CMakeLists.txt): each must be named, with its purl
    for want in ("libssl-dev", "libyaml-cpp-dev", "libjemalloc-dev", "libc6-dev", "nlohmann-json3-dev",
                 "libspdlog-dev", "libfmt-dev", "libcli11-dev", "libboost1.81-dev"):
        if want not in debs:
            problem(f"SBOM lacks the Debian package {want}")
        elif not debs[want]["externalRefs"][0]["referenceLocator"].startswith(f"pkg:deb/debian/{want}@"):
            problem(f"SBOM purl of {want}: {debs[want]['externalRefs']}")
    linked = {r["relatedSpdxElement"] for r in doc["relationships"] if r["relationshipType"] == "STATIC_LINK"}
    if "SPDXRef-Package-deb-libssl-dev" not in linked:
        problem("SBOM does not say OpenSSL is linked statically")


def check_chart(d, version):
    with tarfile.open(os.path.join(d, f"rdma-webhook-{version}.tgz")) as t:
        chart = yaml.safe_load(t.extractfile("rdma-webhook/Chart.yaml"))
        names = t.getnames()
    if (chart["version"], str(chart["appVersion"])) != (version, version):
        problem(f"chart version {chart['version']} appVersion {chart['appVersion']}, want {version}")
    for need in ("rdma-webhook/values.schema.json", "rdma-webhook/templates/tests/test-policy.yaml"):
        if need not in names:
            problem(f"packaged chart lacks {need}")


def check_krew(d, version):
    m = yaml.safe_load(open(os.path.join(d, "rdma.yaml")))
    if m.get("kind") != "Plugin" or m["metadata"]["name"] != "rdma" or m["spec"]["version"] != "v" + version:
        problem(f"krew manifest header {m.get('kind')} {m['metadata']} {m['spec'].get('version')}")
    plats = m["spec"]["platforms"]
    if not any(p["selector"]["matchLabels"] == {"os": "linux", "arch": "amd64"} for p in plats):
        problem("krew manifest has no linux/amd64 platform")
    for p in plats:
        name = p["uri"].rsplit("/", 1)[1]
        path = os.path.join(d, name)
        if not os.path.exists(path):
            problem(f"krew uri {p['uri']} names no archive of the release")
        elif sha256(path) != p["sha256"]:
            problem(f"krew sha256 of {name} does not match")
        if p["bin"] != "kubectl-rdma" or {"from": "rdma-webhook", "to": "kubectl-rdma"} not in p["files"]:
            problem(f"krew platform {p['selector']}: bin {p['bin']}, files {p['files']}")


def main():
    d = sys.argv[1]
    sbom = [f for f in os.listdir(d) if f.endswith("_image.spdx.json")]
    if len(sbom) != 1:
        print(f"  no SBOM in {d}")
        return 1
    version = sbom[0][len("rdma-webhook_"):-len("_image.spdx.json")]
    check_sums(d)
    check_binary_archive(d, version)
    digest = check_image(d, version)
    check_sbom(d, version, digest)
    check_chart(d, version)
    check_krew(d, version)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
