#include "hw_msg.h"

const char *hw_msg_type_name(int type)
{
	switch (type) {
#define X(name, id) case (id): return #name;
		HW_MSG_TABLE(X)
#undef X
	}
	return "UNKNOWN_MSG";
}
