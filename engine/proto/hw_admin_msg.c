#include "hw_admin_msg.h"

const char *hw_broker_state_name(int s)
{
	switch (s) {
#define X(n, v) case (v): return #n;
		HW_BROKER_STATE_TABLE(X)
#undef X
	}
	return "UNKNOWN_STATE";
}
