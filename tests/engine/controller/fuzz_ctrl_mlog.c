/* fuzz_ctrl_mlog.c — libFuzzer target for the controller's metadata-log
 * replay. Input byte 0 picks the mode:
 *   odd:  "framed" — the rest is a sequence of {u8 type, u16 len (LE),
 *         payload}; the harness writes them as whole records with correct
 *         checksums, so the fuzzer reaches the record decoders;
 *   even: "raw" — the rest is the file itself (header, torn tails, bad
 *         checksums).
 * The controller must either refuse the file with a negative errno or come
 * up with a consistent state (every leader in its ISR, sets within the
 * replicas), survive a registration, a heartbeat and a poll, and never
 * crash. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hw_ctrl.h"
#include "hw_bytes.h"
#include "hw_crc32c.h"
#include "hw_ctrl_mlog.h"

static int64_t now_ns(hw_clock *c)
{
	(void)c;
	return 5000000000LL;
}
static hw_clock fake_clock = { .now_ns = now_ns };
static int drop(hw_net *n, const hw_msg *m)
{
	(void)n;
	(void)m;
	return 0;
}
static hw_net null_net = { .send = drop };

static char path[64];

static void cleanup(void)
{
	char tmp[80];
	unlink(path);
	snprintf(tmp, sizeof(tmp), "%s.compact", path);
	unlink(tmp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/hw-fuzz-ctrl-%d.log", (int)getpid());
		atexit(cleanup);
	}
	if (size < 1)
		return 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		abort();
	if (data[0] & 1) {
		if (write(fd, "HWMLOG01", 8) != 8)
			abort();
		size_t off = 1;
		while (size - off >= 3) {
			uint8_t type = data[off];
			size_t len = (size_t)data[off + 1] | (size_t)data[off + 2] << 8;
			off += 3;
			if (len > size - off)
				len = size - off;
			uint8_t *rec = malloc(9 + len);
			rec[8] = type;
			memcpy(rec + 9, data + off, len);
			hw_le32_put(rec, (uint32_t)(len + 1));
			hw_le32_put(rec + 4, hw_crc32c(0, rec + 8, len + 1));
			if (write(fd, rec, 9 + len) != (ssize_t)(9 + len))
				abort();
			free(rec);
			off += len;
		}
	} else if (size > 1 && write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
		abort();
	}
	close(fd);

	hw_ctrl_config cfg;
	hw_ctrl_config_defaults(&cfg);
	cfg.fsync = 0;
	cfg.metadata_log_path = path;
	hw_ctrl *c = NULL;
	int rc = hw_ctrl_create(&cfg, &fake_clock, &null_net, &c);
	if (rc != 0) {
		if (rc > 0 || c)
			abort();
		return 0;
	}
	hw_ctrl_topic_info ti;
	for (int t = 0; hw_ctrl_topic_at(c, t, &ti) == 0; t++)
		for (int p = 0; p < ti.partitions; p++) {
			hw_partition_state s;
			if (hw_ctrl_partition(c, (hw_tp){ ti.id, (uint32_t)p }, &s))
				abort();
			if (s.leader >= 0 && !hw_idset_has(&s.isr, s.leader))
				abort();
			for (int i = 0; i < s.isr.n; i++)
				if (!hw_idset_has(&s.replicas, s.isr.id[i]))
					abort();
		}
	hw_broker_register_req r = { .broker_id = 1, .incarnation_id = 99, .previous_broker_epoch = 3 };
	hw_broker_heartbeat_resp resp;
	if (hw_ctrl_register(c, &r, &resp) == 0 && resp.error == 0) {
		hw_broker_heartbeat_req h = { .broker_id = 1, .broker_epoch = resp.broker_epoch };
		(void)hw_ctrl_heartbeat(c, &h, &resp);
	}
	(void)hw_ctrl_poll(c);
	hw_ctrl_destroy(c);
	return 0;
}
