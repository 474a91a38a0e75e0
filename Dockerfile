# The longhaul worker image: compiled TypeScript, a pre-built workflow bundle and runtime dependencies only,
# on the current Node.js LTS, running as the unprivileged `node` user.
# Build:  docker build -t longhaul-worker .
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The emulator workspace package (a dependency of the CLI, not of the worker): npm ci links it by its manifest.
COPY packages/emulator/package.json ./packages/emulator/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY packages/emulator/index.js packages/emulator/tsconfig.build.json ./packages/emulator/
COPY packages/emulator/src ./packages/emulator/src
COPY src ./src
RUN npm run build && node dist/bundle.js dist/workflow-bundle.js

FROM node:24-bookworm-slim
# glibc malloc settings, as `longhaul worker` starts the worker (src/worker-env.ts; docs/operations.md,
# "Worker memory"): two arenas instead of 8 per core, and blocks of 128 KiB and more in mappings of their own,
# returned when freed, instead of kept resident in the arenas (bench:feeds, 50 feeds, 3 minutes: 293 MB peak
# RSS instead of 552).
ENV NODE_ENV=production \
    LONGHAUL_DATA_DIR=/data \
    LONGHAUL_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js \
    LONGHAUL_METRICS_ADDRESS=0.0.0.0:9464 \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/emulator/package.json ./packages/emulator/
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/packages/emulator/index.js ./packages/emulator/
COPY --from=build /app/packages/emulator/dist ./packages/emulator/dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 9464
# Healthy while the worker serves its metrics (the endpoint lives in the worker process itself).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=4 \
  CMD node -e "fetch('http://127.0.0.1:9464/metrics').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
# --optimize-for-size: V8 keeps both of the worker's heaps small under load (src/worker-env.ts); node takes
# it only on the command line.
CMD ["node", "--optimize-for-size", "dist/worker.js"]
