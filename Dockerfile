# syntax=docker/dockerfile:1
#
# kioku in a container: one static binary on distroless-static (no shell, no libc, CA
# certificates and a non-root user included), the database on the /data volume.
#
#   docker build --build-arg KIOKU_COMMIT=$(git rev-parse HEAD) -t kioku .
#   docker run -d --name kioku -v kioku-data:/data \
#     -e KIOKU_DISCORD_TOKEN=... -e KIOKU_LLM_API_KEY=... kioku
#
# deploy/compose.yaml runs it with a local Ollama; the README's Operations section has more.

# Every base image is pinned to a version (go.mod's Go release); distroless publishes no
# version tags, only the moving nonroot tag. Pin digests too by appending @sha256:… to each
# FROM (README, "Running in Docker, compose or systemd", says how to find them).
ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The build context has no .git (.dockerignore), so the toolchain cannot stamp the commit:
# docker build --build-arg KIOKU_COMMIT=$(git rev-parse HEAD) names it in `kioku version`.
ARG KIOKU_COMMIT=""
# Pure Go (SQLite is the modernc driver), so CGO_ENABLED=0 gives a fully static binary.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.stampedCommit=${KIOKU_COMMIT}" -o /out/kioku ./cmd/kioku \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kioku /kioku
# The volume's mount point belongs to the non-root user, so a new named volume does too.
COPY --from=build --chown=65532:65532 /out/data /data
ENV KIOKU_DB=/data/kioku.db \
    KIOKU_HTTP_ADDR=0.0.0.0:9464
VOLUME /data
WORKDIR /data
# /healthz and /metrics; publish it only where you scrape it.
EXPOSE 9464
USER 65532:65532
# The image has no curl: kioku asks its own /healthz (200, or exit 1 with the reason).
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["/kioku", "healthcheck"]
ENTRYPOINT ["/kioku"]
CMD ["run"]
