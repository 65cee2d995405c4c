-- Ended resource intervals are copied from ResourceCurrentStatus rows, whose keys were checked when
-- they were written: checking them again per inserted row cost five times the insert. Retention
-- deletes a deleted phase's intervals itself.

-- DropForeignKey
ALTER TABLE "ResourceStatusInterval" DROP CONSTRAINT "ResourceStatusInterval_resourceId_fkey";

-- DropForeignKey
ALTER TABLE "ResourceStatusInterval" DROP CONSTRAINT "ResourceStatusInterval_revisionId_fkey";
