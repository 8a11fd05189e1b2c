# convoy in a container: a multi-stage build (RocksDB's C++ needs clang at build time only) and a small
# non-root runtime image holding the one `convoy` binary. See README.md, "Packaging", and docker-compose.yml.
#
#   docker build -t convoy .
#   docker run --rm convoy --help

FROM rust:1-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends clang libclang-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin convoy \
 && install -D -m 0755 target/release/convoy /out/convoy

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 convoy \
 && useradd --system --uid 10001 --gid convoy --home-dir /var/lib/convoy --shell /usr/sbin/nologin convoy \
 && install -d -o convoy -g convoy -m 0700 /var/lib/convoy
COPY --from=build /out/convoy /usr/bin/convoy
USER convoy:convoy
WORKDIR /var/lib/convoy
VOLUME ["/var/lib/convoy"]
# 8081: HTTP API and dashboard (/ui/); 9081: raft transport between servers.
EXPOSE 8081 9081
ENTRYPOINT ["/usr/bin/convoy"]
CMD ["server", "--config", "/etc/convoy/server.toml"]
