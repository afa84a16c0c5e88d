package io.daggerworkbench.udf;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.DescriptorValidationException;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/** Message descriptors out of a serialized {@code FileDescriptorSet} (imports included). */
final class ProtoDescriptors {
    private final Map<String, FileDescriptorProto> protos = new HashMap<>();
    private final Map<String, FileDescriptor> built = new HashMap<>();

    private ProtoDescriptors(FileDescriptorSet set) {
        for (FileDescriptorProto proto : set.getFileList()) {
            protos.putIfAbsent(proto.getName(), proto);
        }
    }

    /** The descriptor of message {@code fullName} in {@code fileDescriptorSet}. */
    static Descriptor message(byte[] fileDescriptorSet, String fullName) {
        FileDescriptorSet set;
        try {
            set = FileDescriptorSet.parseFrom(fileDescriptorSet);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("Not a serialized FileDescriptorSet: "
                    + e.getMessage(), e);
        }
        ProtoDescriptors files = new ProtoDescriptors(set);
        TreeSet<String> known = new TreeSet<>();
        for (FileDescriptorProto proto : set.getFileList()) {
            FileDescriptor file = files.file(proto.getName(), new ArrayList<>());
            Deque<Descriptor> pending = new ArrayDeque<>(file.getMessageTypes());
            while (!pending.isEmpty()) {
                Descriptor d = pending.pop();
                if (d.getFullName().equals(fullName)) {
                    return d;
                }
                known.add(d.getFullName());
                pending.addAll(d.getNestedTypes());
            }
        }
        throw new IllegalArgumentException("No message " + fullName
                + " in the descriptor set; known: " + String.join(", ", known));
    }

    private FileDescriptor file(String name, List<String> importers) {
        FileDescriptor done = built.get(name);
        if (done != null) {
            return done;
        }
        FileDescriptorProto proto = protos.get(name);
        if (proto == null || importers.contains(name)) {
            String problem = proto == null ? "Missing import " : "Import cycle at ";
            throw new IllegalArgumentException(problem + name + " (via "
                    + String.join(" -> ", importers) + "): build the descriptor set with "
                    + "protoc --include_imports.");
        }
        importers.add(name);
        List<FileDescriptor> deps = new ArrayList<>();
        for (String dependency : proto.getDependencyList()) {
            deps.add(file(dependency, importers));
        }
        importers.remove(importers.size() - 1);
        try {
            FileDescriptor file =
                    FileDescriptor.buildFrom(proto, deps.toArray(new FileDescriptor[0]));
            built.put(name, file);
            return file;
        } catch (DescriptorValidationException e) {
            throw new IllegalArgumentException(
                    "Invalid descriptor " + name + ": " + e.getMessage(), e);
        }
    }
}
