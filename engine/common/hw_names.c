/* hw_names.c — see hw_names.h. */
#include <string.h>
#include "hw_names.h"

#define KAFKA_TOPIC_NAME_MAX 249

int hw_topic_name_legal(const char *s, size_t max_len)
{
	if (!s)
		return 0;
	if (max_len > KAFKA_TOPIC_NAME_MAX)
		max_len = KAFKA_TOPIC_NAME_MAX;
	size_t n = strnlen(s, max_len + 1);
	if (n == 0 || n > max_len || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      ch == '.' || ch == '_' || ch == '-'))
			return 0;
	}
	return 1;
}
