-- Clusters nobody reads must not look healthy: readers judge whether a cluster is still observed
-- from its snapshot interval, a cluster no longer configured is marked retired, and the span a
-- cluster went unobserved is kept in its phases' history as an interval marked unobserved.

-- AlterTable
ALTER TABLE "Cluster" ADD COLUMN "snapshotIntervalMs" INTEGER,
ADD COLUMN "retiredAt" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "PhaseStatusInterval" ADD COLUMN "unobserved" BOOLEAN NOT NULL DEFAULT false;
