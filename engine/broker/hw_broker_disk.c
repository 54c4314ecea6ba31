/* hw_broker_disk.c — the broker's files in its log dirs (hw_broker_disk.h). */
#include "hw_broker_disk.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_logging.h"

static int clean_path(const char *log_dir, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s/%s", log_dir, HW_BROKER_CLEAN_SHUTDOWN_FILE);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int64_t hw_broker_take_clean_shutdown(const hw_broker_fs *fs, const char *log_dir)
{
	char path[PATH_MAX], buf[64];
	if (clean_path(log_dir, path, sizeof(path)) < 0)
		return -1;
	int n = fs->read(fs->ctx, path, buf, sizeof(buf));
	if (n < 0)
		return -1;
	long long e = -1;
	if (sscanf(buf, "broker.epoch=%lld", &e) != 1 || e < 0)
		e = -1;
	int rc = fs->remove(fs->ctx, path);
	if (rc < 0)
		HW_LOG(WARN, "broker", "cannot remove %s: %s", path, strerror(-rc));
	HW_LOG(INFO, "broker", "clean-shutdown file found: previous broker epoch %lld", e);
	return e;
}

int hw_broker_partition_meta_read(const hw_broker_fs *fs, const char *dir, uint32_t *topic_id)
{
	char path[PATH_MAX], buf[64];
	int n = snprintf(path, sizeof(path), "%s/%s", dir, HW_BROKER_PARTITION_META_FILE);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	unsigned long long id;
	int ver;
	memset(buf, 0, sizeof(buf));
	if (fs->read(fs->ctx, path, buf, sizeof(buf) - 1) > 0 &&
	    sscanf(buf, "version: %d\ntopic_id: %llu", &ver, &id) == 2 && ver == 0 && id <= UINT32_MAX) {
		*topic_id = (uint32_t)id;
		return 0;
	}
	return -ENOENT;
}

int hw_broker_partition_meta_claim(const hw_broker_fs *fs, const char *dir, uint32_t topic_id)
{
	uint32_t id;
	int rc = hw_broker_partition_meta_read(fs, dir, &id);
	if (rc == -ENAMETOOLONG)
		return rc;
	if (rc == 0)
		return id == topic_id ? 0 : 1;
	char path[PATH_MAX], buf[64];
	snprintf(path, sizeof(path), "%s/%s", dir, HW_BROKER_PARTITION_META_FILE);
	int len = snprintf(buf, sizeof(buf), "version: 0\ntopic_id: %" PRIu32 "\n", topic_id);
	return fs->replace(fs->ctx, path, buf, (size_t)len);
}

int hw_broker_record_clean_shutdown(const hw_broker_fs *fs, const char *log_dir, int64_t epoch)
{
	char path[PATH_MAX], buf[64];
	if (epoch < 0)
		return -EINVAL;
	if (clean_path(log_dir, path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	int len = snprintf(buf, sizeof(buf), "broker.epoch=%" PRId64 "\n", epoch);
	return fs->replace(fs->ctx, path, buf, (size_t)len);
}

int hw_broker_parse_partition_dir(const char *name, char *topic, size_t cap, uint32_t *part)
{
	const char *dash = strrchr(name, '-');
	if (!dash || dash == name || !dash[1] || (size_t)(dash - name) >= cap)
		return -EINVAL;
	char *end;
	unsigned long v = strtoul(dash + 1, &end, 10);
	if (*end || v > 1u << 20 || dash[1] < '0' || dash[1] > '9')
		return -EINVAL;
	for (const char *c = name; c < dash; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '.' || *c == '_' || *c == '-'))
			return -EINVAL;
	memcpy(topic, name, (size_t)(dash - name));
	topic[dash - name] = 0;
	*part = (uint32_t)v;
	return 0;
}

int hw_broker_place_log(const char *const *dirs, const int *offline, int n_dirs, const char *const *log_paths,
			size_t n_logs)
{
	int best = -1;
	size_t best_n = 0;
	for (int d = 0; d < n_dirs; d++) {
		if (offline[d])
			continue;
		size_t cnt = 0, len = strlen(dirs[d]);
		for (size_t i = 0; i < n_logs; i++)
			if (!strncmp(log_paths[i], dirs[d], len) && log_paths[i][len] == '/')
				cnt++;
		if (best < 0 || cnt < best_n) {
			best = d;
			best_n = cnt;
		}
	}
	return best < 0 ? -EIO : best;
}
