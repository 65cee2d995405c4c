-- The open status interval of a phase moves to PhaseCurrentStatus, updated in place (HOT, fillfactor 50),
-- PhaseStatusInterval keeps ended intervals only, inserted closed and never updated. Condition
-- times become timestamptz(3)[] (8 bytes each instead of ~21).

-- CreateTable
CREATE TABLE "PhaseCurrentStatus" (
    "phaseId" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "detailId" INTEGER NOT NULL,
    "conditionTimes" TIMESTAMPTZ(3)[],
    "stale" BOOLEAN NOT NULL DEFAULT false,
    "staleSince" TIMESTAMPTZ(3),
    "from" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "PhaseCurrentStatus_pkey" PRIMARY KEY ("phaseId")
);

ALTER TABLE "PhaseCurrentStatus" SET (fillfactor = 50);

-- AddForeignKey
ALTER TABLE "PhaseCurrentStatus" ADD CONSTRAINT "PhaseCurrentStatus_phaseId_fkey" FOREIGN KEY ("phaseId") REFERENCES "Phase"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Condition times as timestamps (empty or missing times become NULL).
ALTER TABLE "PhaseStatusInterval" ADD COLUMN "conditionTimesNew" TIMESTAMPTZ(3)[];
UPDATE "PhaseStatusInterval" SET "conditionTimesNew" = ARRAY(SELECT NULLIF(t, '')::timestamptz(3) FROM unnest("conditionTimes") WITH ORDINALITY u(t, n) ORDER BY n);
ALTER TABLE "PhaseStatusInterval" DROP COLUMN "conditionTimes";
ALTER TABLE "PhaseStatusInterval" RENAME COLUMN "conditionTimesNew" TO "conditionTimes";

-- Open intervals become current statuses (the latest per phase, should a phase have had several).
INSERT INTO "PhaseCurrentStatus" ("phaseId", "status", "detailId", "conditionTimes", "stale", "staleSince", "from")
SELECT DISTINCT ON ("phaseId") "phaseId", "status", "detailId", "conditionTimes", "stale", "staleSince", "from"
FROM "PhaseStatusInterval" WHERE "to" IS NULL ORDER BY "phaseId", "from" DESC;
DELETE FROM "PhaseStatusInterval" WHERE "to" IS NULL;

-- AlterTable
ALTER TABLE "PhaseStatusInterval" ALTER COLUMN "to" SET NOT NULL;

-- Ended intervals are never updated: pages can be full.
ALTER TABLE "PhaseStatusInterval" SET (fillfactor = 100);
-- Phases move lastSeenAt on every change: room for the next version of each row.
ALTER TABLE "Phase" SET (fillfactor = 50);
