package io.modelopt.kvcache;

/** Says what this module provides so far; the module fills in with its issue (see README "Road ahead"). */
public final class ModuleStatus {
    private ModuleStatus() {}

    /** True once the module's issue has landed. */
    public static final boolean IMPLEMENTED = true;
}
