/* placeholder replaced by the calibration work */
#pragma once
