/* Print where lib3ds (Debian lib3ds-dev 1.3) places every mesh node of a .3ds file.
 * Usage: lib3ds_place FILE FRAME
 * One line per object node:  name<TAB>instance<TAB>16 floats of node matrix (column-major)
 *                            <TAB>6 floats: world bounds (min xyz, max xyz) of the placed mesh
 * Placement as lib3ds' own player does it: node->matrix * T(-pivot) * inverse(mesh->matrix). */
#include <stdio.h>
#include <string.h>
#include <lib3ds/file.h>
#include <lib3ds/mesh.h>
#include <lib3ds/node.h>
#include <lib3ds/matrix.h>
#include <lib3ds/vector.h>

static void walk(Lib3dsFile *f, Lib3dsNode *n) {
    for (; n; n = n->next) {
        if (n->type == LIB3DS_OBJECT_NODE && strcmp(n->name, "$$$DUMMY") != 0) {
            Lib3dsMesh *mesh = lib3ds_file_mesh_by_name(f, n->name);
            printf("%s\t%s", n->name, n->data.object.instance);
            for (int c = 0; c < 4; c++) for (int r = 0; r < 4; r++) printf("\t%.6g", n->matrix[c][r]);
            if (mesh && mesh->points) {
                Lib3dsMatrix inv, M;
                Lib3dsVector lo = {1e30f, 1e30f, 1e30f}, hi = {-1e30f, -1e30f, -1e30f}, p;
                lib3ds_matrix_copy(inv, mesh->matrix);
                lib3ds_matrix_inv(inv);
                lib3ds_matrix_copy(M, n->matrix);
                Lib3dsObjectData *d = &n->data.object;
                lib3ds_matrix_translate_xyz(M, -d->pivot[0], -d->pivot[1], -d->pivot[2]);
                lib3ds_matrix_mult(M, inv);
                for (unsigned i = 0; i < mesh->points; i++) {
                    lib3ds_vector_transform(p, M, mesh->pointL[i].pos);
                    lib3ds_vector_min(lo, p); lib3ds_vector_max(hi, p);
                }
                printf("\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g", lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
            }
            printf("\n");
        }
        walk(f, n->childs);
    }
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    Lib3dsFile *f = lib3ds_file_load(argv[1]);
    if (!f) return 1;
    float frame = 0; sscanf(argv[2], "%f", &frame);
    lib3ds_file_eval(f, frame);
    walk(f, f->nodes);
    lib3ds_file_free(f);
    return 0;
}
