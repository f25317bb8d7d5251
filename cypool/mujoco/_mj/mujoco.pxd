# Declarations from MuJoCo's public headers (mujoco/mujoco.h, mjmodel.h, mjdata.h), limited to
# what cypool uses. Field comments follow the headers.

cdef extern from "mujoco/mujoco.h" nogil:
    ctypedef double mjtNum
    ctypedef long long mjtSize
    int mjVERSION_HEADER
    int mjNWARNING

    ctypedef struct mjOption:
        mjtNum timestep              # timestep
        int integrator               # integration mode (mjtIntegrator)
        int disableflags             # bit flags for disabling standard features

    int mjINT_RK4
    int mjDSBL_ACTUATION
    int mjJNT_FREE
    int mjJNT_BALL
    int mjJNT_SLIDE
    int mjJNT_HINGE

    ctypedef struct mjModel:
        int nq                       # number of generalized coordinates = dim(qpos)
        int nv                       # number of degrees of freedom = dim(qvel)
        int nu                       # number of actuators/controls = dim(ctrl)
        int na                       # number of activation states = dim(act)
        int nbody                    # number of bodies
        int nsite                    # number of sites
        int ncam                     # number of cameras
        int ngeom                    # number of geoms
        int ntendon                  # number of tendons
        mjtSize nsensordata          # number of mjtNums in sensor data vector
        mjtSize nplugin              # number of plugin instances
        mjtSize nbuffer              # number of bytes in buffer
        void* buffer                 # main buffer; all pointers point in it    (nbuffer)
        mjOption opt                 # physics options
        mjtNum* qpos0                # qpos values at default pose              (nq x 1)
        mjtNum* body_mass            # mass                                     (nbody x 1)
        mjtNum* actuator_ctrlrange   # range of controls                        (nu x 2)
        int njnt                     # number of joints
        int* jnt_type                # type of joint (mjtJoint)                 (njnt x 1)
        int* jnt_qposadr             # start addr in 'qpos' for joint's data    (njnt x 1)
        unsigned char* jnt_limited   # does joint have limits                   (njnt x 1)
        mjtNum* jnt_range            # joint limits                             (njnt x 2)
        mjtNum* dof_damping          # damping coefficient                      (nv x 1)
        mjtNum* body_pos             # position offset rel. to parent body      (nbody x 3)
        mjtNum* body_quat            # orientation offset rel. to parent body   (nbody x 4)
        int* body_weldid             # top ancestor with no dofs to this body   (nbody x 1)
        mjtNum* geom_size            # geom-specific size parameters            (ngeom x 3)
        mjtNum* geom_pos             # local position offset rel. to body       (ngeom x 3)
        float* geom_rgba             # rgba when material is omitted            (ngeom x 4)
        int* site_bodyid             # id of site's body                        (nsite x 1)
        mjtNum* site_size            # geom size for rendering                  (nsite x 3)
        mjtNum* site_pos             # local position offset rel. to body       (nsite x 3)
        float* site_rgba             # rgba when not using material             (nsite x 4)

    ctypedef struct mjWarningStat:
        int lastinfo                 # info from last warning
        int number                   # how many times was warning raised

    ctypedef struct mjData:
        mjtSize nbuffer              # size of main buffer in bytes
        void* buffer                 # main buffer; all pointers point in it    (nbuffer bytes)
        mjWarningStat* warning       # warning statistics (array of mjNWARNING)
        mjtNum time                  # simulation time
        mjtNum* qpos                 # position                                 (nq x 1)
        mjtNum* qvel                 # velocity                                 (nv x 1)
        mjtNum* act                  # actuator activation                      (na x 1)
        mjtNum* ctrl                 # control                                  (nu x 1)
        int ncon                     # number of detected contacts
        mjtNum* sensordata           # sensor data array                        (nsensordata x 1)
        mjtNum* xpos                 # Cartesian position of body frame         (nbody x 3)
        mjtNum* xquat                # Cartesian orientation of body frame      (nbody x 4)
        mjtNum* xmat                 # Cartesian orientation of body frame      (nbody x 9)
        mjtNum* site_xmat            # Cartesian site orientation               (nsite x 9)
        mjtNum* geom_xpos            # Cartesian geom position                  (ngeom x 3)
        mjtNum* geom_xmat            # Cartesian geom orientation               (ngeom x 9)
        mjtNum* xipos                # Cartesian position of body com           (nbody x 3)
        mjtNum* site_xpos            # Cartesian site position                  (nsite x 3)
        mjtNum* light_xpos           # Cartesian light position                 (nlight x 3)
        mjtNum* cinert               # com-based body inertia and mass          (nbody x 10)
        mjtNum* ten_length           # tendon lengths                           (ntendon x 1)
        mjtNum* ten_velocity         # tendon velocities                        (ntendon x 1)
        mjtNum* cvel                 # com-based velocity (rot:lin)             (nbody x 6)
        mjtNum* qfrc_actuator        # actuator force in joint space            (nv x 1)
        mjtNum* qfrc_constraint      # constraint force                         (nv x 1)
        mjtNum* cfrc_ext             # com-based external force on body         (nbody x 6)

    int mj_version()
    const char* mj_versionString()
    mjModel* mj_loadXML(const char* filename, const void* vfs, char* error, int error_sz)
    void mj_deleteModel(mjModel* m)
    mjModel* mj_copyModel(mjModel* dest, const mjModel* src)
    void mju_axisAngle2Quat(mjtNum res[4], const mjtNum axis[3], mjtNum angle)
    mjData* mj_makeData(const mjModel* m)
    void mj_deleteData(mjData* d)
