#include <errno.h>
#include "hw_msg.h"

const char *hw_msg_type_name(int type)
{
	switch (type) {
#define X(name, id, plane, owner) case (id): return #name;
		HW_MSG_TABLE(X)
#undef X
	}
	return "UNKNOWN_MSG";
}

int hw_msg_plane_of(int type)
{
	switch (type) {
#define X(name, id, plane, owner) case (id): return HW_PLANE_##plane;
		HW_MSG_TABLE(X)
#undef X
	}
	return -EINVAL;
}

int hw_msg_owner_of(int type)
{
	switch (type) {
#define X(name, id, plane, owner) case (id): return HW_OWNER_##owner;
		HW_MSG_TABLE(X)
#undef X
	}
	return -EINVAL;
}

static const char *const plane_names[] = {
#define X(n) #n,
	HW_MSG_PLANE_TABLE(X)
#undef X
};
static const char *const owner_names[] = {
#define X(n) #n,
	HW_MSG_OWNER_TABLE(X)
#undef X
};

const char *hw_msg_plane_name(int plane)
{
	return plane >= 0 && plane < HW_PLANE__COUNT ? plane_names[plane] : "UNKNOWN_PLANE";
}

const char *hw_msg_owner_name(int owner)
{
	return owner >= 0 && owner < HW_OWNER__COUNT ? owner_names[owner] : "UNKNOWN_OWNER";
}
