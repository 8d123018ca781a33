#!/usr/bin/env python3
"""Writes an SPDX 2.3 JSON SBOM of the rdma-webhook container image from what is really in it.

    scripts/sbom.py --oci out/image/oci --tag 0.1.0 --build-dir build-static --out sbom.spdx.json

What it reads (nothing is typed in by hand):
- the OCI image layout: the manifest and config digests of TAG, and every regular file of every
  layer with its SHA-256 and SHA-1 (the image holds one file, /rdma-webhook);
- the static build in BUILD_DIR: `ninja -t deps` lists every header each object file of the build
  included, build.ninja the archives the binary links, and the compiler names its own static
  runtime (`-print-file-name`); `dpkg-query -S` maps each of those files to the Debian package
  that installed it, `dpkg-query -W` gives its version and source package.
A package that supplied a linked archive is related to the binary with STATIC_LINK; one that
supplied only headers (templates and inline code compiled into the binary: nlohmann-json, CLI11,
most of Boost) with BUILD_DEPENDENCY_OF. Files of the build outside any Debian package (the
project's own sources and generated headers) are the binary's own and are not listed.

Deterministic: `created` is --created (scripts/release.sh passes SOURCE_DATE_EPOCH), the document
namespace is derived from the image manifest digest, and every list is sorted.
Only Debian's dpkg and the standard library are used; exits 1 with a message naming what failed.
"""
import argparse
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import uuid

# Largest layer member hashed; the image's one file is a ~10 MB binary. A bigger member means the
# layout is not the image scripts/image.sh makes.
MAX_MEMBER_BYTES = 512 << 20
# The C and C++ runtime that `g++ -static` links in besides build.ninja's libraries.
RUNTIME_ARCHIVES = ["libstdc++.a", "libm.a", "libc.a", "libgcc.a", "libgcc_eh.a"]


def die(msg):
    print(f"sbom: {msg}", file=sys.stderr)
    sys.exit(1)


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        die(f"cannot read {path}: {e}")


def blob(oci, digest):
    algo, hexd = digest.split(":", 1)
    return os.path.join(oci, "blobs", algo, hexd)


def image_facts(oci, tag):
    index = read_json(os.path.join(oci, "index.json"))
    ms = [m for m in index.get("manifests", [])
          if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag]
    if len(ms) != 1:
        die(f"{oci}/index.json: expected one manifest tagged {tag!r}, found {len(ms)}")
    manifest_digest = ms[0]["digest"]
    manifest = read_json(blob(oci, manifest_digest))
    config = read_json(blob(oci, manifest["config"]["digest"]))
    files = []
    for layer in manifest["layers"]:
        path = blob(oci, layer["digest"])
        opener = gzip.open if layer["mediaType"].endswith("gzip") else open
        with opener(path, "rb") as raw, tarfile.open(fileobj=raw, mode="r|") as tar:
            for m in tar:
                if not m.isfile():
                    continue
                if m.size > MAX_MEMBER_BYTES:
                    die(f"layer {layer['digest']}: {m.name} is {m.size} bytes (bound {MAX_MEMBER_BYTES})")
                data = tar.extractfile(m).read()
                files.append({"name": "./" + m.name.lstrip("./"), "size": m.size,
                              "sha256": hashlib.sha256(data).hexdigest(), "sha1": hashlib.sha1(data).hexdigest()})
    return manifest_digest, manifest["config"]["digest"], config, sorted(files, key=lambda f: f["name"])


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        die(f"{' '.join(cmd[:3])} ... failed: {r.stderr.strip()[:500]}")
    return r.stdout


def build_inputs(build_dir, binary):
    """(headers, archives): absolute paths outside BUILD_DIR and the source tree that went into
    BINARY, as ninja and the compiler report them."""
    deps = run(["ninja", "-C", build_dir, "-t", "deps"])
    source_dir = ""
    cache = os.path.join(build_dir, "CMakeCache.txt")
    compiler = "c++"
    with open(cache) as f:
        for line in f:
            if line.startswith("CMAKE_HOME_DIRECTORY:"):
                source_dir = os.path.realpath(line.split("=", 1)[1].strip())
            elif line.startswith("CMAKE_CXX_COMPILER:"):
                compiler = line.split("=", 1)[1].strip()
    own = (os.path.realpath(build_dir) + os.sep, source_dir + os.sep)
    headers = set()
    for line in deps.splitlines():
        if line.startswith("    "):
            p = os.path.realpath(os.path.join(build_dir, line.strip()))
            if not p.startswith(own):
                headers.add(p)
    ninja = open(os.path.join(build_dir, "build.ninja")).read()
    m = re.search(r"^build " + re.escape(binary) + r": CXX_EXECUTABLE_LINKER.*?\n((?:  .*\n)+)", ninja, re.M)
    if not m:
        die(f"{build_dir}/build.ninja has no link step for {binary}")
    libs = re.search(r"^  LINK_LIBRARIES = (.*)$", m.group(1), re.M)
    archives = {os.path.realpath(t) for t in (libs.group(1).split() if libs else []) if t.startswith("/")}
    for name in RUNTIME_ARCHIVES:
        p = run([compiler, f"-print-file-name={name}"]).strip()
        if os.path.isabs(p):
            archives.add(os.path.realpath(p))
    return headers, archives


def owners(paths):
    """path -> Debian package name, for the paths dpkg knows (arch qualifier dropped)."""
    out = {}
    paths = sorted(paths)
    for i in range(0, len(paths), 500):
        r = subprocess.run(["dpkg-query", "-S", *paths[i:i + 500]], capture_output=True, text=True)
        for line in r.stdout.splitlines():
            pkgs, _, path = line.partition(": ")
            if pkgs.startswith("diversion by"):
                continue
            out[path.strip()] = pkgs.split(",")[0].strip().split(":")[0]
    # dpkg records the path it unpacked, which may sit behind a symlinked directory (/lib -> usr/lib)
    missing = [p for p in paths if p not in out]
    for p in missing:
        alt = p.replace("/usr/lib/", "/lib/", 1) if p.startswith("/usr/lib/") else None
        if alt:
            r = subprocess.run(["dpkg-query", "-S", alt], capture_output=True, text=True)
            if r.returncode == 0:
                out[p] = r.stdout.split(":")[0].split(",")[0].strip()
    return out


def package_facts(names):
    fmt = "${Package}\t${Version}\t${Architecture}\t${source:Package}\t${source:Version}\t${Homepage}\n"
    out = {}
    for line in run(["dpkg-query", "-W", "-f", fmt, *sorted(names)]).splitlines():
        name, version, arch, src, src_version, home = (line.split("\t") + [""] * 6)[:6]
        out[name] = {"version": version, "arch": arch, "source": src or name,
                     "source_version": src_version or version, "homepage": home}
    return out


def os_release():
    facts = {}
    try:
        with open("/etc/os-release") as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                facts[k] = v.strip('"')
    except OSError:
        pass
    return facts.get("ID", "debian"), facts.get("VERSION_ID", "")


def spdx_id(kind, name):
    return f"SPDXRef-{kind}-" + re.sub(r"[^A-Za-z0-9.-]", "-", name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oci", required=True, help="OCI image layout directory")
    ap.add_argument("--tag", required=True, help="tag of the image in the layout (the version)")
    ap.add_argument("--build-dir", required=True, help="the static build that made the binary")
    ap.add_argument("--binary", default="rdma-webhook", help="ninja target of the binary")
    ap.add_argument("--created", required=True, help="creation time, RFC 3339 UTC")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    manifest_digest, config_digest, config, files = image_facts(a.oci, a.tag)
    headers, archives = build_inputs(a.build_dir, a.binary)
    owner = owners(headers | archives)
    linked = {owner[p] for p in archives if p in owner}
    header_only = {owner[p] for p in headers if p in owner} - linked
    facts = package_facts(linked | header_only)
    distro, distro_version = os_release()
    arch = config.get("architecture", "")
    labels = config.get("config", {}).get("Labels", {}) or {}

    image_id = "SPDXRef-Image"
    binary_id = "SPDXRef-Package-rdma-webhook"
    packages = [{
        "SPDXID": image_id, "name": "rdma-webhook", "versionInfo": a.tag,
        "primaryPackagePurpose": "CONTAINER", "downloadLocation": "NOASSERTION",
        "filesAnalyzed": True, "licenseConcluded": "NOASSERTION", "licenseDeclared": "Apache-2.0",
        "copyrightText": "NOASSERTION",
        "checksums": [{"algorithm": "SHA256", "checksumValue": manifest_digest.split(":", 1)[1]}],
        "comment": f"OCI image manifest {manifest_digest}, config {config_digest}, linux/{arch}, "
                   f"revision {labels.get('org.opencontainers.image.revision', 'unknown')}",
        "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                          "referenceLocator": f"pkg:oci/rdma-webhook@{manifest_digest.replace(':', '%3A')}"
                                              f"?arch={arch}&tag={a.tag}"}],
        "hasFiles": [spdx_id("File", f["name"]) for f in files],
    }, {
        "SPDXID": binary_id, "name": "rdma-webhook", "versionInfo": a.tag,
        "primaryPackagePurpose": "APPLICATION", "downloadLocation": "NOASSERTION", "filesAnalyzed": False,
        "licenseConcluded": "Apache-2.0", "licenseDeclared": "Apache-2.0", "copyrightText": "NOASSERTION",
        "comment": "The statically linked binary /rdma-webhook, built from this repository.",
        "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                          "referenceLocator": f"pkg:generic/rdma-webhook@{a.tag}"}],
    }]
    rels = [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES", "relatedSpdxElement": image_id},
            {"spdxElementId": image_id, "relationshipType": "CONTAINS", "relatedSpdxElement": binary_id}]
    for f in files:
        rels.append({"spdxElementId": image_id, "relationshipType": "CONTAINS",
                     "relatedSpdxElement": spdx_id("File", f["name"])})
        if f["name"] == "./" + a.binary:
            rels.append({"spdxElementId": spdx_id("File", f["name"]), "relationshipType": "GENERATED_FROM",
                         "relatedSpdxElement": binary_id})
    for name in sorted(facts):
        p = facts[name]
        pid = spdx_id("Package-deb", name)
        qual = f"?arch={p['arch']}" + (f"&distro={distro}-{distro_version}" if distro_version else "")
        if p["source"] != name:
            qual += f"&upstream={p['source']}"
        entry = {"SPDXID": pid, "name": name, "versionInfo": p["version"], "primaryPackagePurpose": "LIBRARY",
                 "supplier": "Organization: Debian", "downloadLocation": "NOASSERTION", "filesAnalyzed": False,
                 "licenseConcluded": "NOASSERTION", "licenseDeclared": "NOASSERTION", "copyrightText": "NOASSERTION",
                 "sourceInfo": f"Debian source package {p['source']} {p['source_version']}",
                 "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                                   "referenceLocator": f"pkg:deb/{distro}/{name}@{p['version']}{qual}"}]}
        if p["homepage"]:
            entry["homepage"] = p["homepage"]
        packages.append(entry)
        if name in linked:
            rels.append({"spdxElementId": binary_id, "relationshipType": "STATIC_LINK", "relatedSpdxElement": pid})
        else:
            rels.append({"spdxElementId": pid, "relationshipType": "BUILD_DEPENDENCY_OF",
                         "relatedSpdxElement": binary_id})

    doc = {
        "spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0", "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"rdma-webhook-{a.tag}-image",
        "documentNamespace": "urn:uuid:" + str(uuid.uuid5(uuid.NAMESPACE_URL, "rdma-webhook-sbom:" + manifest_digest)),
        "creationInfo": {"created": a.created, "creators": ["Tool: rdma-webhook-scripts-sbom.py"],
                         "comment": f"Debian packages from the build host ({distro} {distro_version}): "
                                    f"{len(linked)} linked statically, {len(header_only)} header-only."},
        "documentDescribes": [image_id],
        "packages": packages,
        "files": [{"SPDXID": spdx_id("File", f["name"]), "fileName": f["name"],
                   "checksums": [{"algorithm": "SHA1", "checksumValue": f["sha1"]},
                                 {"algorithm": "SHA256", "checksumValue": f["sha256"]}],
                   "licenseConcluded": "NOASSERTION", "copyrightText": "NOASSERTION",
                   "comment": f"{f['size']} bytes"} for f in files],
        "relationships": sorted(rels, key=lambda r: (r["spdxElementId"], r["relationshipType"],
                                                     r["relatedSpdxElement"])),
    }
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write("\n")
    print(f"sbom: {a.out}: {len(files)} file(s), {len(linked)} linked and {len(header_only)} header-only "
          f"Debian packages", file=sys.stderr)


if __name__ == "__main__":
    main()
