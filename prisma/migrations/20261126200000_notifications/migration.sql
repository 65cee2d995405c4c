-- Transition notifications: a durable cursor per route and one delivery row per (route, seq).

-- CreateTable
CREATE TABLE "NotificationCursor" (
    "route" TEXT NOT NULL,
    "seq" BIGINT NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "NotificationCursor_pkey" PRIMARY KEY ("route")
);

-- CreateTable
CREATE TABLE "NotificationDelivery" (
    "id" BIGSERIAL NOT NULL,
    "route" TEXT NOT NULL,
    "seq" BIGINT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "reason" TEXT,
    "subject" TEXT NOT NULL,
    "clusterId" INTEGER NOT NULL,
    "phaseId" INTEGER,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "flapCount" INTEGER,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deliveredAt" TIMESTAMPTZ(3),

    CONSTRAINT "NotificationDelivery_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "NotificationDelivery_route_seq_key" ON "NotificationDelivery"("route", "seq");

-- CreateIndex
CREATE INDEX "NotificationDelivery_route_subject_at_idx" ON "NotificationDelivery"("route", "subject", "at");

-- CreateIndex
CREATE INDEX "NotificationDelivery_status_idx" ON "NotificationDelivery"("status");
