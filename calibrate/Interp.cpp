#include "calibrate/Interp.hpp"
