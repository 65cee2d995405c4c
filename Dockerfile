# phaselog: one image, two roles (api, worker). Build: docker build -t phaselog .
# The build stage installs everything from the lock file and builds dist/ (compiled sources, the web
# UI and GraphiQL bundles); the image gets production dependencies only: no esbuild, tsx, React or
# GraphiQL sources, Prisma CLI (and its Studio), or embedded PostgreSQL (an image is given
# DATABASE_URL). test/e2e/production-install.test.ts runs these same steps without Docker.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY prisma ./prisma
COPY prisma.config.ts ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --omit=optional --no-audit --no-fund \
 && rm -rf web test bench docs .ci

FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    PHASELOG_STATE_DIR=/var/lib/phaselog \
    PHASELOG_PROBE_PORT=4001
COPY --from=build /app /app
# Non-root, with a writable state directory (compiled-at-start output never needed: dist/ is current).
RUN mkdir -p /var/lib/phaselog && chown node:node /var/lib/phaselog
USER node
VOLUME /var/lib/phaselog
EXPOSE 4000 4001
# Probes whichever listener this container's role has: the API's port, or a worker's probe port.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s CMD ["node", "bin/healthcheck.mjs"]
ENTRYPOINT ["node", "bin/phaselog.mjs"]
CMD ["start"]
