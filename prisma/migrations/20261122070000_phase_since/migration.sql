-- The start of the run of the current status of each phase is stored with it (its since), so
-- reading it is one lookup instead of a walk back through ended intervals.

-- AlterTable
ALTER TABLE "PhaseCurrentStatus" ADD COLUMN "since" TIMESTAMPTZ(3);

-- Existing rows: walk back while the previous interval ends where the next begins, with the same status.
WITH RECURSIVE walk AS (
  SELECT c."phaseId", c."from", c."status" FROM "PhaseCurrentStatus" c
  UNION ALL
  SELECT w."phaseId", prev."from", prev."status" FROM walk w
  CROSS JOIN LATERAL (
    SELECT p."from", p."to", p."status" FROM "PhaseStatusInterval" p
    WHERE p."phaseId" = w."phaseId" AND p."from" < w."from" ORDER BY p."from" DESC LIMIT 1
  ) prev
  WHERE prev."to" = w."from" AND prev."status" = w."status"
)
UPDATE "PhaseCurrentStatus" c SET "since" = m."since"
FROM (SELECT "phaseId", min("from") AS "since" FROM walk GROUP BY "phaseId") m
WHERE m."phaseId" = c."phaseId";

ALTER TABLE "PhaseCurrentStatus" ALTER COLUMN "since" SET NOT NULL;
