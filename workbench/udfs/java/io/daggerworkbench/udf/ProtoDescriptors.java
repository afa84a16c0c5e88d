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
        Map<String, Descriptor> all = all(fileDescriptorSet);
        Descriptor found = all.get(fullName);
        if (found == null) {
            throw new IllegalArgumentException("No message " + fullName
                    + " in the descriptor set; known: " + String.join(", ", new TreeSet<>(all.keySet())));
        }
        return found;
    }

    /** Every message (nested ones too) in {@code fileDescriptorSet}, by full name. */
    static Map<String, Descriptor> all(byte[] fileDescriptorSet) {
        FileDescriptorSet set;
        try {
            set = FileDescriptorSet.parseFrom(fileDescriptorSet);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("Not a serialized FileDescriptorSet: "
                    + e.getMessage(), e);
        }
        ProtoDescriptors files = new ProtoDescriptors(set);
        Map<String, Descriptor> found = new HashMap<>();
        for (FileDescriptorProto proto : set.getFileList()) {
            FileDescriptor file = files.file(proto.getName(), new ArrayList<>());
            Deque<Descriptor> pending = new ArrayDeque<>(file.getMessageTypes());
            while (!pending.isEmpty()) {
                Descriptor d = pending.pop();
                found.putIfAbsent(d.getFullName(), d);
                pending.addAll(d.getNestedTypes());
            }
        }
        return found;
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
