/* fuzz_top_metrics.c — libFuzzer target for the Prometheus text reader of
 * `hiwater top` (apps/hiwater/hw_top.h), which reads whatever a metrics
 * port answers. For every input, read as the text of a node:
 *   - the reader stays inside its tables: at most HW_TOP_MAX_PARTS
 *     partitions, each topic NUL-terminated and shorter than
 *     HW_TOP_TOPIC_MAX, at most HW_TOP_MAX_LE buckets with strictly
 *     ascending bounds, and no partition twice;
 *   - the p99 of the buckets against an empty histogram of the same layout
 *     is NaN or lies between min(0, first bound) and the last finite bound
 *     (histogram_quantile() semantics), whatever the counts. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hw_top.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static hw_top_node n, empty;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	memset(&n, 0, sizeof(n));
	hw_top_parse_metrics(text, &n);
	free(text);
	if (n.n_parts < 0 || n.n_parts > HW_TOP_MAX_PARTS || n.n_le < 0 || n.n_le > HW_TOP_MAX_LE)
		abort();
	for (int i = 0; i < n.n_parts; i++) {
		if (memchr(n.parts[i].topic, 0, HW_TOP_TOPIC_MAX) == NULL)
			abort();
		if (hw_top_find(&n, n.parts[i].topic, n.parts[i].partition) != &n.parts[i])
			abort(); /* an earlier entry with the same name: a duplicate */
	}
	for (int i = 1; i < n.n_le; i++)
		if (!(n.le[i] > n.le[i - 1]))
			abort();
	empty = n;
	memset(empty.bucket, 0, sizeof(empty.bucket));
	double q = hw_top_quantile(0.99, &n, &empty);
	if (!isnan(q)) {
		double lo = n.le[0] < 0 ? n.le[0] : 0;
		if (n.n_le < 2 || q < lo || q > n.le[n.n_le - 2])
			abort();
	}
	return 0;
}
