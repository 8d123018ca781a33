# syntax=docker/dockerfile:1
# rdma-webhook container image.
#
#   docker build -t <your-registry>/rdma-webhook:0.1.0 \
#     --build-arg VERSION=0.1.0 --build-arg REVISION="$(git rev-parse HEAD)" .
#
# Without a container engine, `make image` (scripts/image.sh) builds the same
# image with umoci and skopeo; tests/image/run.sh fails when its config and
# this file's USER, EXPOSE, ENTRYPOINT, CMD and LABEL differ.
#
# Build stage: the same Debian 12 packages and the same CMake configuration
# as scripts/setup.sh and the README, plus a fully static link
# (-DRW_STATIC=ON) so the runtime stage needs no libc, no loader, nothing.
FROM debian:bookworm AS build
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libboost1.81-dev libssl-dev nlohmann-json3-dev libspdlog-dev \
      libyaml-cpp-dev libcli11-dev libfmt-dev libgtest-dev libgmock-dev libjemalloc-dev \
      cmake ninja-build g++ \
      binutils file \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The build refuses to ship a dynamic binary: the runtime stage has no loader.
RUN cmake -S . -B /build -G Ninja \
      -DRW_STATIC=ON -DRW_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release \
 && cmake --build /build --target rdma-webhook \
 && strip /build/rdma-webhook \
 && file /build/rdma-webhook | tee /dev/stderr | grep -Eq 'statically linked|static-pie linked' \
 && /build/rdma-webhook version

# Runtime stage: the binary and nothing else. No shell, no libc, no
# package manager; UID/GID 65532 as in the Helm chart. The webhook's drain
# on SIGTERM is done by the server itself (--shutdown-delay), since there is
# no `sleep` to run in a preStop hook.
FROM scratch
ARG VERSION=unknown
ARG REVISION=unknown
LABEL org.opencontainers.image.title="rdma-webhook" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /build/rdma-webhook /rdma-webhook
USER 65532:65532
EXPOSE 8443 8080
ENTRYPOINT ["/rdma-webhook"]
CMD ["serve", \
     "--tls-cert", "/etc/rdma-webhook/tls/tls.crt", \
     "--tls-key", "/etc/rdma-webhook/tls/tls.key", \
     "--policy", "/etc/rdma-webhook/policy/policy.yaml", \
     "--listen", "0.0.0.0:8443", \
     "--probe-listen", "0.0.0.0:8080", \
     "--log-format", "json", \
     "--shutdown-delay", "5s"]
