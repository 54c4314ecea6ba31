#include "hw_assert.h"
__thread int hw_current_reactor = -1;
