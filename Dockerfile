# agent-api as a container image: multi-stage (dependencies and the compiled tree in the
# first stage, only what runs in the second), running as the unprivileged `node` user.
# Not built on the development machine (it has no container engine): see docs/deploy.md.
#
#   docker build -t agent-api .
#   docker run -p 8080:8080 -v agent-api-data:/data agent-api
#
# Several instances: see docs/deploy.md (DATABASE_URL, REDIS_URL, a shared AGENT_API_BLOB_DIR,
# one AGENT_API_INSTANCE_ID each).

FROM node:20-bookworm-slim AS build
WORKDIR /app
# Native modules (better-sqlite3) come prebuilt for this platform from the npm registry.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY scripts ./scripts
COPY src ./src
# Compile src/ to .build/<hash>/ now, so a start never needs to write the application directory.
RUN node --input-type=module -e "const { buildOnce } = await import('./scripts/build.mjs'); await buildOnce();"

FROM node:20-bookworm-slim
# bubblewrap: the code sandbox (containers, code tools); pocketsphinx: offline transcription.
# Both optional: without them those engines answer 503 naming the package.
RUN apt-get update \
  && apt-get install -y --no-install-recommends bubblewrap pocketsphinx pocketsphinx-en-us \
  && rm -rf /var/lib/apt/lists/* \
  && mkdir -p /data \
  && chown node:node /data
WORKDIR /app
COPY --from=build --chown=root:root /app /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "scripts/start.mjs"]
