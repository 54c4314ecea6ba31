#include "hw_err.h"

const char *hw_err_name(int code)
{
	switch (code) {
#define X(name, c, r) case (c): return #name;
		HW_ERR_TABLE(X)
#undef X
	}
	return "UNKNOWN_ERROR_CODE";
}

int hw_err_retriable(int code)
{
	switch (code) {
#define X(name, c, r) case (c): return (r);
		HW_ERR_TABLE(X)
#undef X
	}
	return 0;
}

int hw_err_known(int code)
{
	switch (code) {
#define X(name, c, r) case (c): return 1;
		HW_ERR_TABLE(X)
#undef X
	}
	return 0;
}
