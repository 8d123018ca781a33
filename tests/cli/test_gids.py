"""`gids --sysfs-root DIR` on fake sysfs trees, text and JSON (docs/cli.md#gids)."""
import pytest

from conftest import rw

LINK_LOCAL = "fe80:0000:0000:0000:0a1b:2cff:fe3d:4e5f"
V4 = "0000:0000:0000:0000:0000:ffff:c0a8:010a"  # 192.168.1.10
V4B = "0000:0000:0000:0000:0000:ffff:0a00:0005"  # 10.0.0.5
V6 = "2001:0db8:0000:0000:0000:0000:0000:0042"
ZERO = "0000:0000:0000:0000:0000:0000:0000:0000"
IB_GID = "fe80:0000:0000:0000:248a:0703:00f8:1234"


class Tree:
    def __init__(self, root):
        self.root = root
        self.cls = root / "sys" / "class" / "infiniband"

    def port(self, dev, port, link_layer):
        d = self.cls / dev / "ports" / str(port)
        for sub in ("gids", "gid_attrs/types", "gid_attrs/ndevs"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        (d / "link_layer").write_text(link_layer + "\n")
        return self

    def gid(self, dev, port, index, gid, gtype=None, ndev=None):
        d = self.cls / dev / "ports" / str(port)
        (d / "gids" / str(index)).write_text(gid + "\n")
        if gtype:
            (d / "gid_attrs" / "types" / str(index)).write_text(gtype + "\n")
        if ndev:
            (d / "gid_attrs" / "ndevs" / str(index)).write_text(ndev + "\n")
        return self

    def typical(self, dev, port, ndev):
        self.port(dev, port, "Ethernet")
        self.gid(dev, port, 0, LINK_LOCAL, "IB/RoCE v1", ndev)
        self.gid(dev, port, 1, LINK_LOCAL, "RoCE v2", ndev)
        self.gid(dev, port, 2, V4, "IB/RoCE v1", ndev)
        self.gid(dev, port, 3, V4, "RoCE v2", ndev)
        for i in range(4, 8):
            self.gid(dev, port, i, ZERO)
        return self


def entry(dev, port, index, gid, ipv4, gtype, ndev):
    return {"device": dev, "port": port, "index": index, "gid": gid, "ipv4": ipv4,
            "type": gtype, "netdev": ndev}


def gids_json(root):
    r = rw("gids", "--sysfs-root", root, "-o", "json")
    assert r.rc == 0, r
    return r.json(), r


def test_typical_roce_node(tmp_path):
    Tree(tmp_path).typical("mlx5_0", 1, "eth1")
    data, _ = gids_json(tmp_path)
    assert data == {
        "gids": [entry("mlx5_0", 1, 0, LINK_LOCAL, "", "IB/RoCE v1", "eth1"),
                 entry("mlx5_0", 1, 1, LINK_LOCAL, "", "RoCE v2", "eth1"),
                 entry("mlx5_0", 1, 2, V4, "192.168.1.10", "IB/RoCE v1", "eth1"),
                 entry("mlx5_0", 1, 3, V4, "192.168.1.10", "RoCE v2", "eth1")],
        "recommended": [{"device": "mlx5_0", "port": 1, "index": 3}],
    }


def test_several_devices_ports_and_numeric_order(tmp_path):
    t = Tree(tmp_path)
    t.typical("mlx5_10", 1, "eth10").typical("mlx5_2", 2, "eth2b").typical("mlx5_2", 1, "eth2a")
    t.port("mlx5_0", 1, "Ethernet")
    t.gid("mlx5_0", 1, 10, V4B, "RoCE v2", "eth0").gid("mlx5_0", 1, 9, V4, "RoCE v2", "eth0")
    t.gid("mlx5_0", 1, 2, V6, "RoCE v2", "eth0")
    data, _ = gids_json(tmp_path)
    order = [(g["device"], g["port"], g["index"]) for g in data["gids"]]
    assert order[:3] == [("mlx5_0", 1, 2), ("mlx5_0", 1, 9), ("mlx5_0", 1, 10)]
    assert [o[:2] for o in order[3:]] == [("mlx5_2", 1)] * 4 + [("mlx5_2", 2)] * 4 + [
        ("mlx5_10", 1)] * 4
    assert data["recommended"] == [{"device": "mlx5_0", "port": 1, "index": 9},
                                   {"device": "mlx5_2", "port": 1, "index": 3},
                                   {"device": "mlx5_2", "port": 2, "index": 3},
                                   {"device": "mlx5_10", "port": 1, "index": 3}]


def test_infiniband_port_gets_no_recommendation(tmp_path):
    t = Tree(tmp_path).port("mlx5_0", 1, "InfiniBand")
    t.gid("mlx5_0", 1, 0, IB_GID, "IB/RoCE v1")
    data, _ = gids_json(tmp_path)
    assert data == {"gids": [entry("mlx5_0", 1, 0, IB_GID, "", "IB/RoCE v1", "")],
                    "recommended": []}


def test_ipv6_only_port_gets_no_recommendation(tmp_path):
    t = Tree(tmp_path).port("mlx5_0", 1, "Ethernet")
    t.gid("mlx5_0", 1, 0, LINK_LOCAL, "RoCE v2", "eth1").gid("mlx5_0", 1, 1, V6, "RoCE v2", "eth1")
    data, r = gids_json(tmp_path)
    assert len(data["gids"]) == 2 and data["recommended"] == []
    text = rw("gids", "--sysfs-root", tmp_path)
    assert "none" in text.out.lower(), text


def test_unreadable_entry_is_a_note_not_a_failure(tmp_path):
    t = Tree(tmp_path).typical("mlx5_0", 1, "eth1")
    # A directory where a GID file should be: reading it fails (EISDIR) even as root.
    (t.cls / "mlx5_0" / "ports" / "1" / "gids" / "9").mkdir()
    data, r = gids_json(tmp_path)
    assert len(data["gids"]) == 4
    assert data["recommended"] == [{"device": "mlx5_0", "port": 1, "index": 3}]
    assert "9" in r.err, r


def test_text_mimics_show_gids(tmp_path):
    t = Tree(tmp_path).typical("mlx5_0", 1, "eth1")
    t.port("mlx5_1", 1, "InfiniBand").gid("mlx5_1", 1, 0, IB_GID, "IB/RoCE v1")
    r = rw("gids", "--sysfs-root", tmp_path, "-o", "text")
    assert r.rc == 0, r
    lines = r.out.splitlines()
    assert lines[0].split() == ["DEV", "PORT", "INDEX", "GID", "IPv4", "VER", "NETDEV"], r
    rows = [l.split() for l in lines if l.startswith("mlx5_")]
    assert ["mlx5_0", "1", "3", V4, "192.168.1.10", "v2", "eth1"] in rows, r
    assert ["mlx5_0", "1", "0", LINK_LOCAL, "v1", "eth1"] in rows, r
    assert ["mlx5_1", "1", "0", IB_GID, "v1"] in rows, r
    # Ends with the recommended index per Ethernet port.
    tail = "\n".join(lines[-3:])
    assert "mlx5_0" in tail and "3" in tail, r
    assert rw("gids", "--sysfs-root", tmp_path).out == r.out, "text is the default"


@pytest.mark.parametrize("make", ["missing", "empty-class-dir"])
def test_no_devices_is_empty_exit_0_with_a_note(tmp_path, make):
    root = tmp_path / "root"
    if make == "empty-class-dir":
        (root / "sys" / "class" / "infiniband").mkdir(parents=True)
    data, r = gids_json(root)
    assert data == {"gids": [], "recommended": []}
    assert r.err.strip(), "a note on stderr"
    r = rw("gids", "--sysfs-root", root)
    assert r.rc == 0 and r.err.strip(), r
