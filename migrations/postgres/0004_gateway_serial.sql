-- Run ids unique across machines by construction: each gateway, when it registers, draws a serial
-- from this sequence and makes its run ids `SECS-gSERIAL-SEQ` (crate::engine::run_id); no two
-- registrations ever draw the same serial, whatever their host, pid or clock.
CREATE SEQUENCE gateway_serial;
ALTER TABLE gateways ADD COLUMN serial BIGINT;
