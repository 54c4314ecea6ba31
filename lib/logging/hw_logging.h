/* hw_logging.h — leveled logging with per-module levels.
 *
 * HW_LOG(INFO, "repl", "ISR shrink %s", ...). Levels per module are set with
 * hw_logging_configure("info,repl=debug,log=warn") or the HW_LOG environment
 * variable with the same syntax (read once at first use). Output goes to
 * stderr as "<mono-ms> LEVEL module: message". Thread-safe (one write(2)
 * per line).
 */
#ifndef HW_LOGGING_H
#define HW_LOGGING_H
#include <stdarg.h>

#define HW_LOG_LEVELS(X) X(ERROR) X(WARN) X(INFO) X(DEBUG) X(TRACE)
typedef enum hw_log_level {
#define HW_LVL_ENUM(n) HW_LVL_##n,
	HW_LOG_LEVELS(HW_LVL_ENUM)
#undef HW_LVL_ENUM
} hw_log_level;

const char *hw_log_level_name(int lvl); /* never NULL */

/* Parse "level[,module=level...]". Returns 0, or -EINVAL naming nothing
 * (the spec is left unapplied). Unknown modules are accepted (a module is
 * just a string). */
int hw_logging_configure(const char *spec);
/* The same parse without applying it: 0 or -EINVAL. */
int hw_logging_spec_check(const char *spec);
/* 1 if a message at lvl for module would be printed. */
int hw_logging_enabled(int lvl, const char *module);
/* Prefix every line with this (e.g. "b1"); NULL clears. */
void hw_logging_set_prefix(const char *prefix);

void hw_logf(int lvl, const char *module, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void hw_vlogf(int lvl, const char *module, const char *fmt, va_list ap);

#define HW_LOG(lvl, module, ...)                                        \
	do {                                                            \
		if (hw_logging_enabled(HW_LVL_##lvl, (module)))         \
			hw_logf(HW_LVL_##lvl, (module), __VA_ARGS__);   \
	} while (0)

#endif
