# The longhaul worker image: compiled TypeScript plus a pre-built workflow bundle.
# Build:  docker build -t longhaul-worker .
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && node dist/temporal/bundle.js dist/workflow-bundle.js

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    LONGHAUL_DATA_DIR=/data \
    LONGHAUL_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
CMD ["node", "dist/worker.js"]
