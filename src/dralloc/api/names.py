"""Look-alike strings that must not be mixed up: a driver, a pool, a device and a node are all plain names.

``NewType`` costs nothing at run time; the type checker then refuses a pool name where a node name is
expected. ``DeviceID`` is upstream's ``<driver>/<pool>/<device>``.
"""

from __future__ import annotations

from typing import NewType

DriverName = NewType("DriverName", str)
PoolName = NewType("PoolName", str)
DeviceName = NewType("DeviceName", str)
NodeName = NewType("NodeName", str)
DeviceID = NewType("DeviceID", str)


def device_id(driver: DriverName | str, pool: PoolName | str, device: DeviceName | str) -> DeviceID:
    return DeviceID(f"{driver}/{pool}/{device}")
