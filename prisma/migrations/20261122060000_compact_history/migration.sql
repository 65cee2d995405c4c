-- Compact history (issue #6): status details stored once per distinct value (StatusDetail), resources
-- referred to by an int id (Resource), interval tables keyed by (owner, from) with no index on `to`
-- (so closing an interval is a HOT update), and change-log rows that carry ids instead of text.
-- Existing history is carried over row by row. Carried-over details are hashed as sql: plus the md5 of
-- the jsonb text, new ones as the sha256 of canonical JSON: a value seen again after the upgrade may be
-- stored twice (once per scheme), never lost.


-- CreateTable
CREATE TABLE "StatusDetail" (
    "id" SERIAL NOT NULL,
    "hash" TEXT NOT NULL,
    "body" JSONB NOT NULL,

    CONSTRAINT "StatusDetail_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "StatusDetail_hash_key" ON "StatusDetail"("hash");

-- CreateTable
CREATE TABLE "Resource" (
    "id" SERIAL NOT NULL,
    "phaseId" INTEGER NOT NULL,
    "key" TEXT NOT NULL,

    CONSTRAINT "Resource_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Resource_phaseId_key_key" ON "Resource"("phaseId", "key");

-- AddForeignKey
ALTER TABLE "Resource" ADD CONSTRAINT "Resource_phaseId_fkey" FOREIGN KEY ("phaseId") REFERENCES "Phase"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The old interval tables step aside under other names, without their constraints and indexes.
ALTER TABLE "ResourceStatusInterval" RENAME TO "ResourceStatusInterval_old";
ALTER TABLE "ResourceStatusInterval_old" DROP CONSTRAINT "ResourceStatusInterval_pkey";
ALTER TABLE "ResourceStatusInterval_old" DROP CONSTRAINT "ResourceStatusInterval_phaseId_fkey";
ALTER TABLE "ResourceStatusInterval_old" DROP CONSTRAINT "ResourceStatusInterval_revisionId_fkey";
DROP INDEX "ResourceStatusInterval_phaseId_resourceKey_from_idx";
DROP INDEX "ResourceStatusInterval_phaseId_to_idx";
ALTER TABLE "PhaseStatusInterval" RENAME TO "PhaseStatusInterval_old";
ALTER TABLE "PhaseStatusInterval_old" DROP CONSTRAINT "PhaseStatusInterval_pkey";
ALTER TABLE "PhaseStatusInterval_old" DROP CONSTRAINT "PhaseStatusInterval_phaseId_fkey";
DROP INDEX "PhaseStatusInterval_phaseId_from_idx";

-- CreateTable
CREATE TABLE "ResourceStatusInterval" (
    "resourceId" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "detailId" INTEGER NOT NULL,
    "revisionId" INTEGER,
    "from" TIMESTAMPTZ(3) NOT NULL,
    "to" TIMESTAMPTZ(3),

    CONSTRAINT "ResourceStatusInterval_pkey" PRIMARY KEY ("resourceId","from")
);

-- CreateTable
CREATE TABLE "PhaseStatusInterval" (
    "phaseId" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "detailId" INTEGER NOT NULL,
    "conditionTimes" TEXT[],
    "stale" BOOLEAN NOT NULL DEFAULT false,
    "staleSince" TIMESTAMPTZ(3),
    "from" TIMESTAMPTZ(3) NOT NULL,
    "to" TIMESTAMPTZ(3),

    CONSTRAINT "PhaseStatusInterval_pkey" PRIMARY KEY ("phaseId","from")
);

-- Closing an interval only sets `to`: leave room on each page so that update stays HOT.
ALTER TABLE "ResourceStatusInterval" SET (fillfactor = 90);
ALTER TABLE "PhaseStatusInterval" SET (fillfactor = 90);
-- Phases move lastSeenAt on every change.
ALTER TABLE "Phase" SET (fillfactor = 80);

-- AddForeignKey
ALTER TABLE "ResourceStatusInterval" ADD CONSTRAINT "ResourceStatusInterval_resourceId_fkey" FOREIGN KEY ("resourceId") REFERENCES "Resource"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "ResourceStatusInterval" ADD CONSTRAINT "ResourceStatusInterval_revisionId_fkey" FOREIGN KEY ("revisionId") REFERENCES "ObjectRevision"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "PhaseStatusInterval" ADD CONSTRAINT "PhaseStatusInterval_phaseId_fkey" FOREIGN KEY ("phaseId") REFERENCES "Phase"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Resources: every (phase, key) of an interval or a change of a phase that still exists.
INSERT INTO "Resource" ("phaseId", "key")
SELECT o."phaseId", o."resourceKey" FROM "ResourceStatusInterval_old" o
UNION
SELECT sc."phaseId", sc."resourceKey" FROM "StatusChange" sc
WHERE sc."resourceKey" IS NOT NULL AND EXISTS (SELECT 1 FROM "Phase" p WHERE p."id" = sc."phaseId");

-- Resource details and intervals.
CREATE TEMP TABLE "old_resource_detail" AS
SELECT o.*, jsonb_strip_nulls(jsonb_build_object('reason', o."reason", 'message', o."message", 'conditions', o."conditions", 'presence', o."presence",
  'generation', o."generation", 'observedGeneration', o."observedGeneration", 'customHealth', o."customHealth")) AS "body"
FROM "ResourceStatusInterval_old" o;
INSERT INTO "StatusDetail" ("hash", "body")
SELECT 'sql:' || md5(b."body"::text), b."body" FROM (SELECT DISTINCT "body" FROM "old_resource_detail") b
ON CONFLICT ("hash") DO NOTHING;
INSERT INTO "ResourceStatusInterval" ("resourceId", "status", "detailId", "revisionId", "from", "to")
SELECT r."id", o."status", d."id", o."revisionId", o."from", o."to"
FROM "old_resource_detail" o
JOIN "Resource" r ON r."phaseId" = o."phaseId" AND r."key" = o."resourceKey"
JOIN "StatusDetail" d ON d."hash" = 'sql:' || md5(o."body"::text)
ORDER BY r."id", o."from", o."id" DESC
ON CONFLICT ("resourceId", "from") DO NOTHING;

-- Phase details (conditions without their transition times, which stay on the interval) and intervals.
CREATE TEMP TABLE "old_phase_detail" AS
SELECT o.*,
  jsonb_strip_nulls(jsonb_build_object('message', o."message", 'summary', o."summary", 'worstResource', o."worstResource",
    'conditions', (SELECT coalesce(jsonb_agg(CASE WHEN jsonb_typeof(e.c) = 'object' THEN e.c - 'lastTransitionTime' ELSE e.c END ORDER BY e.n), '[]'::jsonb)
                   FROM jsonb_array_elements(CASE WHEN jsonb_typeof(o."conditions") = 'array' THEN o."conditions" ELSE '[]'::jsonb END) WITH ORDINALITY e(c, n)))) AS "body",
  (SELECT array_agg(CASE WHEN jsonb_typeof(e.c) = 'object' THEN e.c ->> 'lastTransitionTime' END ORDER BY e.n)
   FROM jsonb_array_elements(CASE WHEN jsonb_typeof(o."conditions") = 'array' THEN o."conditions" ELSE '[]'::jsonb END) WITH ORDINALITY e(c, n)) AS "times"
FROM "PhaseStatusInterval_old" o;
INSERT INTO "StatusDetail" ("hash", "body")
SELECT 'sql:' || md5(b."body"::text), b."body" FROM (SELECT DISTINCT "body" FROM "old_phase_detail") b
ON CONFLICT ("hash") DO NOTHING;
INSERT INTO "PhaseStatusInterval" ("phaseId", "status", "detailId", "conditionTimes", "stale", "staleSince", "from", "to")
SELECT o."phaseId", o."status", d."id", coalesce(o."times", '{}'), o."stale", o."staleSince", o."from", o."to"
FROM "old_phase_detail" o
JOIN "StatusDetail" d ON d."hash" = 'sql:' || md5(o."body"::text)
WHERE EXISTS (SELECT 1 FROM "Phase" p WHERE p."id" = o."phaseId")
ORDER BY o."phaseId", o."from", o."id" DESC
ON CONFLICT ("phaseId", "from") DO NOTHING;

DROP TABLE "ResourceStatusInterval_old";
DROP TABLE "PhaseStatusInterval_old";

-- The change log: resource ids and message details instead of text.
ALTER TABLE "StatusChange" ADD COLUMN "resourceId" INTEGER, ADD COLUMN "detailId" INTEGER;
INSERT INTO "StatusDetail" ("hash", "body")
SELECT 'sql:' || md5(b."body"::text), b."body" FROM (SELECT DISTINCT jsonb_build_object('message', "message") AS "body" FROM "StatusChange") b
ON CONFLICT ("hash") DO NOTHING;
UPDATE "StatusChange" sc SET "detailId" = d."id"
FROM "StatusDetail" d WHERE d."hash" = 'sql:' || md5(jsonb_build_object('message', sc."message")::text);
UPDATE "StatusChange" sc SET "resourceId" = r."id"
FROM "Resource" r WHERE sc."resourceKey" IS NOT NULL AND r."phaseId" = sc."phaseId" AND r."key" = sc."resourceKey";
ALTER TABLE "StatusChange" ALTER COLUMN "detailId" SET NOT NULL;
ALTER TABLE "StatusChange" DROP COLUMN "resourceKey", DROP COLUMN "message";

-- DropIndex
DROP INDEX "StatusChange_at_idx";

-- CreateIndex
CREATE INDEX "StatusChange_at_idx" ON "StatusChange" USING BRIN ("at");
