-- CreateTable
CREATE TABLE "Cluster" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "labels" JSONB NOT NULL DEFAULT '{}',
    "reachable" BOOLEAN,
    "lastGoodReadAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Cluster_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ClusterReachability" (
    "id" SERIAL NOT NULL,
    "clusterId" INTEGER NOT NULL,
    "reachable" BOOLEAN NOT NULL,
    "errorKind" TEXT,
    "message" TEXT NOT NULL DEFAULT '',
    "from" TIMESTAMPTZ(3) NOT NULL,
    "to" TIMESTAMPTZ(3),

    CONSTRAINT "ClusterReachability_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Phase" (
    "id" SERIAL NOT NULL,
    "clusterId" INTEGER NOT NULL,
    "sourceKind" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "inventoryId" TEXT NOT NULL DEFAULT '',
    "labels" JSONB NOT NULL DEFAULT '{}',
    "firstSeenAt" TIMESTAMPTZ(3) NOT NULL,
    "lastSeenAt" TIMESTAMPTZ(3) NOT NULL,
    "deletedAt" TIMESTAMPTZ(3),

    CONSTRAINT "Phase_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Manifest" (
    "id" SERIAL NOT NULL,
    "hash" TEXT NOT NULL,
    "source" JSONB NOT NULL,
    "entries" JSONB NOT NULL,
    "entryCount" INTEGER NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Manifest_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PhaseManifest" (
    "id" SERIAL NOT NULL,
    "phaseId" INTEGER NOT NULL,
    "manifestId" INTEGER NOT NULL,
    "from" TIMESTAMPTZ(3) NOT NULL,
    "to" TIMESTAMPTZ(3),

    CONSTRAINT "PhaseManifest_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ObjectRevision" (
    "id" SERIAL NOT NULL,
    "hash" TEXT NOT NULL,
    "object" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ObjectRevision_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ResourceStatusInterval" (
    "id" BIGSERIAL NOT NULL,
    "phaseId" INTEGER NOT NULL,
    "resourceKey" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "reason" TEXT,
    "message" TEXT NOT NULL DEFAULT '',
    "conditions" JSONB NOT NULL DEFAULT '[]',
    "presence" TEXT NOT NULL,
    "generation" BIGINT,
    "observedGeneration" BIGINT,
    "customHealth" JSONB,
    "revisionId" INTEGER,
    "from" TIMESTAMPTZ(3) NOT NULL,
    "to" TIMESTAMPTZ(3),

    CONSTRAINT "ResourceStatusInterval_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PhaseStatusInterval" (
    "id" BIGSERIAL NOT NULL,
    "phaseId" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "summary" JSONB NOT NULL,
    "conditions" JSONB NOT NULL DEFAULT '[]',
    "worstResource" TEXT,
    "stale" BOOLEAN NOT NULL DEFAULT false,
    "from" TIMESTAMPTZ(3) NOT NULL,
    "to" TIMESTAMPTZ(3),

    CONSTRAINT "PhaseStatusInterval_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "StatusChange" (
    "seq" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "clusterId" INTEGER NOT NULL,
    "phaseId" INTEGER,
    "scope" TEXT NOT NULL,
    "resourceKey" TEXT,
    "fromStatus" TEXT,
    "toStatus" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',

    CONSTRAINT "StatusChange_pkey" PRIMARY KEY ("seq")
);

-- CreateTable
CREATE TABLE "ObservationTick" (
    "id" BIGSERIAL NOT NULL,
    "clusterId" INTEGER NOT NULL,
    "outcome" TEXT NOT NULL,
    "stateHash" TEXT NOT NULL,
    "firstSeenAt" TIMESTAMPTZ(3) NOT NULL,
    "lastSeenAt" TIMESTAMPTZ(3) NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 1,

    CONSTRAINT "ObservationTick_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiToken" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "scopes" TEXT[],
    "clusters" TEXT[],
    "namespaces" TEXT[],
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMPTZ(3),
    "revokedAt" TIMESTAMPTZ(3),

    CONSTRAINT "ApiToken_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Report" (
    "id" SERIAL NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "params" JSONB NOT NULL,
    "format" TEXT NOT NULL,
    "content" TEXT NOT NULL,

    CONSTRAINT "Report_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Cluster_name_key" ON "Cluster"("name");

-- CreateIndex
CREATE INDEX "ClusterReachability_clusterId_from_idx" ON "ClusterReachability"("clusterId", "from");

-- CreateIndex
CREATE INDEX "Phase_name_idx" ON "Phase"("name");

-- CreateIndex
CREATE UNIQUE INDEX "Phase_clusterId_sourceKind_namespace_name_key" ON "Phase"("clusterId", "sourceKind", "namespace", "name");

-- CreateIndex
CREATE UNIQUE INDEX "Manifest_hash_key" ON "Manifest"("hash");

-- CreateIndex
CREATE INDEX "PhaseManifest_phaseId_from_idx" ON "PhaseManifest"("phaseId", "from");

-- CreateIndex
CREATE UNIQUE INDEX "ObjectRevision_hash_key" ON "ObjectRevision"("hash");

-- CreateIndex
CREATE INDEX "ResourceStatusInterval_phaseId_resourceKey_from_idx" ON "ResourceStatusInterval"("phaseId", "resourceKey", "from");

-- CreateIndex
CREATE INDEX "ResourceStatusInterval_phaseId_to_idx" ON "ResourceStatusInterval"("phaseId", "to");

-- CreateIndex
CREATE INDEX "PhaseStatusInterval_phaseId_from_idx" ON "PhaseStatusInterval"("phaseId", "from");

-- CreateIndex
CREATE INDEX "StatusChange_phaseId_seq_idx" ON "StatusChange"("phaseId", "seq");

-- CreateIndex
CREATE INDEX "StatusChange_clusterId_seq_idx" ON "StatusChange"("clusterId", "seq");

-- CreateIndex
CREATE INDEX "StatusChange_at_idx" ON "StatusChange"("at");

-- CreateIndex
CREATE INDEX "ObservationTick_clusterId_lastSeenAt_idx" ON "ObservationTick"("clusterId", "lastSeenAt");

-- CreateIndex
CREATE UNIQUE INDEX "ApiToken_name_key" ON "ApiToken"("name");

-- CreateIndex
CREATE UNIQUE INDEX "ApiToken_tokenHash_key" ON "ApiToken"("tokenHash");

-- AddForeignKey
ALTER TABLE "ClusterReachability" ADD CONSTRAINT "ClusterReachability_clusterId_fkey" FOREIGN KEY ("clusterId") REFERENCES "Cluster"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Phase" ADD CONSTRAINT "Phase_clusterId_fkey" FOREIGN KEY ("clusterId") REFERENCES "Cluster"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PhaseManifest" ADD CONSTRAINT "PhaseManifest_phaseId_fkey" FOREIGN KEY ("phaseId") REFERENCES "Phase"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PhaseManifest" ADD CONSTRAINT "PhaseManifest_manifestId_fkey" FOREIGN KEY ("manifestId") REFERENCES "Manifest"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ResourceStatusInterval" ADD CONSTRAINT "ResourceStatusInterval_phaseId_fkey" FOREIGN KEY ("phaseId") REFERENCES "Phase"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ResourceStatusInterval" ADD CONSTRAINT "ResourceStatusInterval_revisionId_fkey" FOREIGN KEY ("revisionId") REFERENCES "ObjectRevision"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PhaseStatusInterval" ADD CONSTRAINT "PhaseStatusInterval_phaseId_fkey" FOREIGN KEY ("phaseId") REFERENCES "Phase"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ObservationTick" ADD CONSTRAINT "ObservationTick_clusterId_fkey" FOREIGN KEY ("clusterId") REFERENCES "Cluster"("id") ON DELETE CASCADE ON UPDATE CASCADE;
