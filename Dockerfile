# The svc image: every layer of the node (`svc node execution|beacon|validator`), the genesis step
# of an exported network (`svc devnet genesis`), and the CLI. See docs/deploy.md.
#
#   docker build -t svc:0.1.0 .
#   docker run --rm svc:0.1.0 --version

# Build stage: `npm ci` runs `prepare` (tsc, svc's WebAssembly verifier and the contracts), which needs the dev dependencies.
FROM node:20-slim AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY scripts ./scripts
COPY src ./src
COPY contracts ./contracts
COPY wasm ./wasm
COPY test ./test
COPY bench ./bench
COPY fixtures ./fixtures
RUN npm ci --no-audit --no-fund

# Runtime stage: production dependencies only, plus the built output.
FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build again, and the build is copied from the first stage.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY --from=build /src/dist/src ./dist/src
COPY --from=build /src/dist/contracts ./dist/contracts
COPY --from=build /src/dist/wasm ./dist/wasm
# The command list, so each `svc` process imports only the command it runs (scripts/oclif-manifest.mjs).
COPY --from=build /src/oclif.manifest.json ./
COPY contracts ./contracts
COPY monitoring ./monitoring
# The exported network's mount points, owned by the unprivileged user so fresh volumes inherit it.
RUN mkdir -p /svc/genesis /data && chown node:node /svc/genesis /data \
 && ln -s /app/bin/run.js /usr/local/bin/svc
USER node
ENV SVC_HOME=/data/.svc
# 8545 JSON-RPC, 8546 execution REST, 8080 beacon REST and /ws, 8547 validator metrics, 9000-9001 libp2p.
EXPOSE 8545 8546 8080 8547 9000 9001
# The probed URL depends on the process the container runs: SVC_HEALTH_URL (default execution's /health).
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["node", "/app/bin/healthcheck.js"]
ENTRYPOINT ["node", "/app/bin/run.js"]
CMD ["--help"]
