-- Every snapshot moves its cluster's stateVersion by one: a worker's in-memory copy of the
-- cluster's current state is used only while the version it was made at is still the row's.

-- AlterTable
ALTER TABLE "Cluster" ADD COLUMN "stateVersion" INTEGER NOT NULL DEFAULT 0;
