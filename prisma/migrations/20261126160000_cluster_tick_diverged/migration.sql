-- A live snapshot that writes during an observation run used to append a +live mark to the
-- run's state hash so that no later tick matched it. That is a column of its own now, and the
-- run keeps its real hash.

-- AlterTable
ALTER TABLE "Cluster" ADD COLUMN "tickDiverged" BOOLEAN NOT NULL DEFAULT false;

UPDATE "Cluster" SET "tickDiverged" = true, "tickStateHash" = left("tickStateHash", length("tickStateHash") - 5)
WHERE "tickStateHash" LIKE '%+live';
