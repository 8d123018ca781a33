# The two commands of the README. Everything else is in scripts/.
.PHONY: run test build image release
run:    ## build and run the admission server on 127.0.0.1 (embedded policy, dev certificate)
	scripts/run-dev.sh
test:   ## the whole test suite, as CI runs it
	scripts/test.sh
build:
	scripts/setup.sh && scripts/build.sh
image:  ## the container image without a container engine: out/image/oci (OCI layout) and out/image/rdma-webhook.tar
	scripts/image.sh
release:  ## versioned binaries (amd64; arm64 with a Debian cross toolchain), SHA256SUMS, image, SBOM, chart, krew manifest: out/release/<version>/
	scripts/release.sh --cross
