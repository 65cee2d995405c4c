-- Conditions from checks (phaselog.yaml `checks`): current and ended intervals per phase and
-- condition type, the last run of each check per cluster, and condition-scope change-log rows.

-- AlterTable
ALTER TABLE "StatusChange" ADD COLUMN "conditionType" TEXT;

-- CreateTable
CREATE TABLE "PhaseConditionCurrent" (
    "phaseId" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "from" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "PhaseConditionCurrent_pkey" PRIMARY KEY ("phaseId","type")
);

-- Updated in place on every change: room for the next version of each row (HOT updates).
ALTER TABLE "PhaseConditionCurrent" SET (fillfactor = 50);

-- CreateTable
CREATE TABLE "PhaseConditionInterval" (
    "phaseId" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "from" TIMESTAMPTZ(3) NOT NULL,
    "to" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "PhaseConditionInterval_pkey" PRIMARY KEY ("phaseId","type","from")
);

-- CreateTable
CREATE TABLE "CheckRun" (
    "check" TEXT NOT NULL,
    "clusterId" INTEGER NOT NULL,
    "lastRunAt" TIMESTAMPTZ(3) NOT NULL,
    "intervalMs" INTEGER NOT NULL,

    CONSTRAINT "CheckRun_pkey" PRIMARY KEY ("check","clusterId")
);

-- Every unchanged run moves lastRunAt: room for the next version of each row.
ALTER TABLE "CheckRun" SET (fillfactor = 50);

-- AddForeignKey
ALTER TABLE "PhaseConditionCurrent" ADD CONSTRAINT "PhaseConditionCurrent_phaseId_fkey" FOREIGN KEY ("phaseId") REFERENCES "Phase"("id") ON DELETE CASCADE ON UPDATE CASCADE;
