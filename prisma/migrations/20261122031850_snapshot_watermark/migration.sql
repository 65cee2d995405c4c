-- AlterTable
ALTER TABLE "Cluster" ADD COLUMN     "lastTickAt" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "PhaseStatusInterval" ADD COLUMN     "staleSince" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "StatusChange" ALTER COLUMN "toStatus" DROP NOT NULL;
