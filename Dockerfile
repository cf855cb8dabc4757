# Likeness: the control plane on Bun. Build: docker build -t likeness .
FROM oven/bun:1.4.4-debian
WORKDIR /app
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile --production
COPY src ./src
COPY agent ./agent
COPY drizzle ./drizzle
COPY tsconfig.json bunfig.toml ./
ENV PORT=8080 DATA_DIR=/data
VOLUME /data
EXPOSE 8080
# Never `bun build --compile`: agent jobs fork files that must exist on disk.
CMD ["bun", "src/cli/index.ts", "serve"]
