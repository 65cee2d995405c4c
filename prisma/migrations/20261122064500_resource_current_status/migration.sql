-- The open status interval of a resource moves to ResourceCurrentStatus, updated in place (HOT,
-- fillfactor 50), and ResourceStatusInterval keeps ended intervals only, inserted closed and never
-- updated, so its pages can be full.

-- CreateTable
CREATE TABLE "ResourceCurrentStatus" (
    "resourceId" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "detailId" INTEGER NOT NULL,
    "revisionId" INTEGER,
    "from" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ResourceCurrentStatus_pkey" PRIMARY KEY ("resourceId")
);

ALTER TABLE "ResourceCurrentStatus" SET (fillfactor = 50);

-- AddForeignKey
ALTER TABLE "ResourceCurrentStatus" ADD CONSTRAINT "ResourceCurrentStatus_resourceId_fkey" FOREIGN KEY ("resourceId") REFERENCES "Resource"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "ResourceCurrentStatus" ADD CONSTRAINT "ResourceCurrentStatus_revisionId_fkey" FOREIGN KEY ("revisionId") REFERENCES "ObjectRevision"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Open intervals become current statuses (the latest per resource, should one have had several).
INSERT INTO "ResourceCurrentStatus" ("resourceId", "status", "detailId", "revisionId", "from")
SELECT DISTINCT ON ("resourceId") "resourceId", "status", "detailId", "revisionId", "from"
FROM "ResourceStatusInterval" WHERE "to" IS NULL ORDER BY "resourceId", "from" DESC;
DELETE FROM "ResourceStatusInterval" WHERE "to" IS NULL;

-- AlterTable
ALTER TABLE "ResourceStatusInterval" ALTER COLUMN "to" SET NOT NULL;

ALTER TABLE "ResourceStatusInterval" SET (fillfactor = 100);
