"""protoc (from grpcio-tools) turning folders of .proto into descriptor sets."""

from __future__ import annotations

import pytest
from google.protobuf import descriptor_pb2

from workbench.exceptions import SchemaError
from workbench.schemas.compiler import ProtoCompileError, compile_protos
from workbench.schemas.registry import BUNDLED_PROTOS

pytestmark = pytest.mark.unit

RIDE = 'syntax = "proto3";\npackage fleet;\nmessage Ride {\n  string id = 1;\n}\n'


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def files_in(path) -> list[str]:
    return [f.name for f in descriptor_pb2.FileDescriptorSet.FromString(path.read_bytes()).file]


def write(folder, name: str, text: str):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_demo_protos_compile_with_their_imports(home):
    out = compile_protos([BUNDLED_PROTOS])
    assert out.parent == home / "schemas"
    assert files_in(out) == [
        "google/protobuf/timestamp.proto",
        "esb/apilog.proto",
        "esb/booking.proto",
        "esb/driver.proto",
        "esb/payment.proto",
    ]


def test_output_is_cached_until_a_source_changes(tmp_path):
    source = write(tmp_path / "protos", "fleet/ride.proto", RIDE)
    first = compile_protos([tmp_path / "protos"])
    stamp = first.stat().st_mtime_ns
    assert compile_protos([tmp_path / "protos"]) == first
    assert first.stat().st_mtime_ns == stamp
    source.write_text(RIDE.replace("string id = 1;", "string id = 1;\n  int64 km = 2;"))
    second = compile_protos([tmp_path / "protos"])
    assert second != first
    ride = descriptor_pb2.FileDescriptorSet.FromString(second.read_bytes()).file[0]
    assert [f.name for f in ride.message_type[0].field] == ["id", "km"]


def test_syntax_error_carries_file_line_and_column(tmp_path):
    write(tmp_path / "bad", "fleet/ride.proto", RIDE.replace("string id", "strin id"))
    with pytest.raises(ProtoCompileError) as caught:
        compile_protos([tmp_path / "bad"])
    problem = caught.value.problems[0]
    assert problem.file.endswith("fleet/ride.proto")
    assert (problem.line, problem.column) == (4, 3)
    assert '"strin" is not defined' in problem.message
    assert "fleet/ride.proto:4:3:" in str(caught.value)
    assert "fix the lines protoc names" in str(caught.value)


def test_missing_import_is_reported(tmp_path):
    text = RIDE.replace("package fleet;", 'package fleet;\nimport "fleet/driver.proto";')
    write(tmp_path / "p", "fleet/ride.proto", text)
    with pytest.raises(ProtoCompileError, match=r"fleet/driver\.proto"):
        compile_protos([tmp_path / "p"])


def test_folders_import_each_other(tmp_path):
    write(tmp_path / "a", "fleet/ride.proto", RIDE)
    user = 'syntax = "proto3";\nimport "fleet/ride.proto";\nmessage Trip { fleet.Ride ride = 1; }\n'
    write(tmp_path / "b", "trip.proto", user)
    out = compile_protos([tmp_path / "a", tmp_path / "b"])
    assert files_in(out) == ["fleet/ride.proto", "trip.proto"]


def test_same_path_in_two_folders_is_refused(tmp_path):
    write(tmp_path / "a", "fleet/ride.proto", RIDE)
    write(tmp_path / "b", "fleet/ride.proto", RIDE)
    with pytest.raises(SchemaError, match=r"'fleet/ride\.proto' is in both .* rename or remove"):
        compile_protos([tmp_path / "a", tmp_path / "b"])


def test_missing_or_empty_folders(tmp_path):
    with pytest.raises(SchemaError, match=r"does not exist: give a folder of \.proto"):
        compile_protos([tmp_path / "nowhere"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(SchemaError, match=r"No \.proto files found in .*empty"):
        compile_protos([tmp_path / "empty"])
