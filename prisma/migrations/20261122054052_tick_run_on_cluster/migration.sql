-- AlterTable
ALTER TABLE "Cluster" ADD COLUMN     "tickCount" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "tickFirstSeenAt" TIMESTAMPTZ(3),
ADD COLUMN     "tickLastSeenAt" TIMESTAMPTZ(3),
ADD COLUMN     "tickOutcome" TEXT,
ADD COLUMN     "tickStateHash" TEXT;

-- Each cluster's latest observation run becomes its current run, on the Cluster row.
UPDATE "Cluster" c SET "tickOutcome" = t."outcome", "tickStateHash" = t."stateHash",
  "tickFirstSeenAt" = t."firstSeenAt", "tickLastSeenAt" = t."lastSeenAt", "tickCount" = t."count"
FROM "ObservationTick" t
WHERE t."id" = (SELECT max(l."id") FROM "ObservationTick" l WHERE l."clusterId" = c."id");

DELETE FROM "ObservationTick" t
WHERE t."id" = (SELECT max(l."id") FROM "ObservationTick" l WHERE l."clusterId" = t."clusterId");

-- Cluster rows are updated every tick: leave room so the update stays on the page (HOT).
ALTER TABLE "Cluster" SET (fillfactor = 50);
